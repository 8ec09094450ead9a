package history

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Pending submissions: the sbatch wrapper's records of submissions whose
// job id it never saw (its advice runs beside Slurm's sbatch, which the
// shim runs in its own place). Each waits until collect has the job's
// accounting record, then LinkPending files it as a submission.
const (
	// PendingEarly is how much earlier than the wrapper's record a job may
	// have been submitted and still be its job. The record's time is when
	// the wrapper's process started, which the shim forks before it runs
	// Slurm's sbatch, so the job was submitted after it: only the clocks of
	// the login node and of slurmctld may say otherwise, and they differ by
	// milliseconds where NTP keeps them (sacct's submit time is truncated
	// to its second, which the pairing allows for apart from this). A job
	// submitted seconds before the record, by hand or with Slurm's own
	// sbatch, is never its job.
	PendingEarly = 2 * time.Second
	// PendingLate bounds how much later the job may have been submitted:
	// sbatch may retry a busy controller for a while.
	PendingLate = 2 * time.Minute
	// PendingTie is how far apart in time two candidates may be and still
	// be equally plausible: how long sbatch usually takes to be answered,
	// on a second's resolution. A record's job is among the jobs nearest
	// to it within PendingTie, and a job's record among the records
	// nearest to it.
	PendingTie = 2 * time.Second
	// PendingRefused is how long a record whose time accounting was asked
	// about may go without a job before it is taken for one sbatch refused
	// and dropped: slurmdbd may lag slurmctld by minutes, even hours when it
	// was down.
	PendingRefused = 24 * time.Hour
	// PendingKept is how long any record waits: one whose time accounting
	// was never asked about (no collect for a week), or that stayed
	// ambiguous, goes too.
	PendingKept = 7 * 24 * time.Hour
)

// ScriptHash is the hash a pending submission keeps of its script's bytes
// (Submission.ScriptHash), compared with that of the script slurmdbd stored
// for a job: a SHA-256, of the bytes less their trailing line breaks
// (sacct prints each script with one added).
func ScriptHash(data []byte) string {
	sum := sha256.Sum256(bytes.TrimRight(data, "\n"))
	return hex.EncodeToString(sum[:])
}

// OldestPending is when the oldest pending submission was made; ok is
// false when there is none. Collect asks sacct for the user's jobs since
// then.
func (s *Store) OldestPending(ctx context.Context) (at time.Time, ok bool, err error) {
	var us *int64
	if err := s.db.QueryRowContext(ctx, `SELECT min(submitted) FROM pending_submissions`).Scan(&us); err != nil {
		return time.Time{}, false, fmt.Errorf("read pending submissions: %w", err)
	}
	if us == nil {
		return time.Time{}, false, nil
	}
	return time.UnixMicro(*us), true, nil
}

// PendingCount is how many submissions made since a time (zero: ever)
// wait for their jobs.
func (s *Store) PendingCount(ctx context.Context, since time.Time) (int, error) {
	var n int
	from := int64(0)
	if !since.IsZero() {
		from = since.UnixMicro()
	}
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pending_submissions WHERE submitted >= ?`, from).Scan(&n); err != nil {
		return 0, fmt.Errorf("read pending submissions: %w", err)
	}
	return n, nil
}

// DropStalePending drops the records older than PendingKept at now: their
// jobs, if Slurm took them, were never asked about (no collect for a week),
// and asking sacct for a longer window on every collect would cost more
// than they are worth.
func (s *Store) DropStalePending(ctx context.Context, now time.Time) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM pending_submissions WHERE submitted < ?`, now.Add(-PendingKept).UnixMicro()); err != nil {
		return fmt.Errorf("drop old pending submissions: %w", err)
	}
	return nil
}

// pendingJob is a job a pending submission may be: one sbatch answer (an
// array's tasks are one), not yet any submission's.
type pendingJob struct {
	cluster, id, name, dir, user, profile string
	submit                                int64  // unix seconds, as sacct gives them
	hash                                  string // ScriptHash of the script slurmdbd stored; "": none
}

// StoredScripts reads the scripts slurmdbd stored for jobs of a cluster,
// by the ids sbatch printed (an array's by its tasks' ids, 18_0, as sacct
// --batch-script names them): none for a job it has none for (a site
// without AccountingStoreFlags=job_script, a job not started yet).
type StoredScripts func(ctx context.Context, cluster string, ids []string) (map[string][]byte, error)

// PendingLinks is what LinkPendingWith did: the records linked to their
// jobs, those dropped (sbatch refused them), and those left unlinked as
// ambiguous: two or more records and jobs were equally plausible pairs and
// no stored script told them apart. The ambiguous wait for a later collect
// (a job's script is stored once it starts) until PendingKept.
type PendingLinks struct{ Linked, Dropped, Ambiguous int }

// LinkPending is LinkPendingWith without slurmdbd's stored scripts: the
// records linked and dropped.
func (s *Store) LinkPending(ctx context.Context, now, asked time.Time) (linked, dropped int, err error) {
	res, err := s.LinkPendingWith(ctx, now, asked, nil)
	return res.Linked, res.Dropped, err
}

// LinkPendingWith files pending submissions as the submissions of their
// jobs, and never guesses. A record's job has its name, directory (as
// paths, cleaned), user, cluster and profile (where the record names them),
// was submitted from PendingEarly before the record (the record is made
// before sbatch runs) to PendingLate after it, is no submission's, and ran
// the record's script: where slurmdbd stored the job's script (stored; nil:
// none is read), its hash is the record's. Of those, a record's candidates
// are its nearest jobs within PendingTie, and a job's its nearest records:
// a submission sbatch refused does not take the job of the corrected one
// that followed it.
//
// Records and jobs so paired fall into groups (those that share a
// candidate). A group whose records all made the same submission (the same
// script, hash, path and profile: the same script submitted in a loop)
// links each record to one of its jobs, those whose script was stored
// first, then the nearest, and of equally near ones the later (a job
// submitted just before the records, with Slurm's own sbatch, is the one
// left); any job of them is a run of that script. A group whose records
// made different submissions (two scripts of one job name submitted from one
// directory at once, no stored script to tell their jobs apart) links none:
// its records are counted ambiguous and wait.
//
// Where accounting was asked about every job submitted since asked (the
// zero time: it was not), a record from then on, older than
// PendingRefused, that found no job was refused by sbatch and is dropped.
func (s *Store) LinkPendingWith(ctx context.Context, now, asked time.Time, stored StoredScripts) (PendingLinks, error) {
	var res PendingLinks
	recs, err := s.pendingRecords(ctx)
	if err != nil || len(recs) == 0 {
		return res, err
	}
	jobs, err := s.pendingJobs(ctx, recs[0].Submitted.Add(-PendingEarly-time.Second), recs[len(recs)-1].Submitted.Add(PendingLate))
	if err != nil {
		return res, err
	}
	pairs := pendingPairs(recs, jobs)
	if stored != nil && len(pairs) > 0 {
		if err := storedHashes(ctx, stored, jobs, pairs); err != nil {
			return res, err
		}
	}
	links, ambiguous := choosePairs(recs, jobs, pairs)
	linked := map[int]bool{}
	for _, p := range links {
		sub := recs[p.rec]
		sub.Cluster, sub.JobID, sub.Source = jobs[p.job].cluster, jobs[p.job].id, sub.Script
		if err := s.RecordSubmissions(ctx, []Submission{sub}); err != nil {
			return res, err
		}
		if err := s.dropPending(ctx, recs[p.rec]); err != nil {
			return res, err
		}
		linked[p.rec] = true
		res.Linked++
	}
	res.Ambiguous = len(ambiguous)
	for i, r := range recs {
		if !linked[i] && !ambiguous[i] && !asked.IsZero() && !r.Submitted.Before(asked) && now.Sub(r.Submitted) > PendingRefused {
			if err := s.dropPending(ctx, r); err != nil {
				return res, err
			}
			res.Dropped++
		}
	}
	return res, nil
}

// pendingPair is a record (an index in the records) and a job that may be
// its, and how far apart in time they are.
type pendingPair struct {
	rec, job int
	gap      time.Duration
}

// pendingPairs are the pairs of a record and a job that may be its, by
// everything but their scripts.
func pendingPairs(recs []Submission, jobs []pendingJob) []pendingPair {
	var pairs []pendingPair
	for i, r := range recs {
		for k, j := range jobs {
			if j.name != r.JobName || filepath.Clean(j.dir) != filepath.Clean(r.WorkDir) || (r.User != "" && j.user != r.User) ||
				(r.Cluster != "" && j.cluster != r.Cluster) || (r.Profile != "" && j.profile != "" && j.profile != r.Profile) {
				continue
			}
			// The job was submitted in its second [from, to): before the
			// record by more than the clocks' skew, or long after it, it is
			// another submission's.
			from, to := time.Unix(j.submit, 0), time.Unix(j.submit+1, 0)
			if !to.After(r.Submitted.Add(-PendingEarly)) || from.After(r.Submitted.Add(PendingLate)) {
				continue
			}
			var gap time.Duration
			switch {
			case r.Submitted.Before(from):
				gap = from.Sub(r.Submitted)
			case !r.Submitted.Before(to):
				gap = r.Submitted.Sub(to)
			}
			pairs = append(pairs, pendingPair{i, k, gap})
		}
	}
	return pairs
}

// storedHashes asks for the scripts slurmdbd stored for the jobs of pairs,
// and keeps their hashes.
func storedHashes(ctx context.Context, stored StoredScripts, jobs []pendingJob, pairs []pendingPair) error {
	ids := map[string][]string{} // by cluster
	seen := map[int]bool{}
	for _, p := range pairs {
		if !seen[p.job] {
			seen[p.job] = true
			ids[jobs[p.job].cluster] = append(ids[jobs[p.job].cluster], jobs[p.job].id)
		}
	}
	for _, cluster := range slices.Sorted(maps.Keys(ids)) {
		scripts, err := stored(ctx, cluster, ids[cluster])
		if err != nil {
			return fmt.Errorf("read the scripts slurmdbd stored: %w", err)
		}
		for k := range jobs {
			if !seen[k] || jobs[k].cluster != cluster {
				continue
			}
			data, ok := scripts[jobs[k].id]
			if !ok { // an array: its tasks ran one script
				for id, d := range scripts {
					if strings.HasPrefix(id, jobs[k].id+"_") {
						data, ok = d, true
						break
					}
				}
			}
			if ok {
				jobs[k].hash = ScriptHash(data)
			}
		}
	}
	return nil
}

// choosePairs decides which pairs are links (see LinkPendingWith), and
// which records are left ambiguous.
func choosePairs(recs []Submission, jobs []pendingJob, all []pendingPair) (links []pendingPair, ambiguous map[int]bool) {
	// A job whose stored script is not the record's ran another script.
	var pairs []pendingPair
	for _, p := range all {
		if h := jobs[p.job].hash; h == "" || recs[p.rec].ScriptHash == "" || h == recs[p.rec].ScriptHash {
			pairs = append(pairs, p)
		}
	}
	// Each record's and each job's nearest candidates, within PendingTie.
	nearestRec, nearestJob := map[int]time.Duration{}, map[int]time.Duration{}
	for _, p := range pairs {
		if g, ok := nearestRec[p.rec]; !ok || p.gap < g {
			nearestRec[p.rec] = p.gap
		}
		if g, ok := nearestJob[p.job]; !ok || p.gap < g {
			nearestJob[p.job] = p.gap
		}
	}
	pairs = slices.DeleteFunc(pairs, func(p pendingPair) bool {
		return p.gap > nearestRec[p.rec]+PendingTie || p.gap > nearestJob[p.job]+PendingTie
	})
	// Groups: records and jobs joined by their candidates (union-find over
	// records 0..n-1 and jobs n..).
	parent := make([]int, len(recs)+len(jobs))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	for _, p := range pairs {
		parent[find(p.rec)] = find(len(recs) + p.job)
	}
	groups := map[int][]pendingPair{}
	for _, p := range pairs {
		root := find(p.rec)
		groups[root] = append(groups[root], p)
	}
	ambiguous = map[int]bool{}
	for _, root := range slices.Sorted(maps.Keys(groups)) {
		group := groups[root]
		if !sameSubmission(recs, group) {
			for _, p := range group {
				ambiguous[p.rec] = true
			}
			continue
		}
		links = append(links, linkGroup(recs, jobs, group)...)
	}
	return links, ambiguous
}

// sameSubmission reports whether the records of a group made the same
// submission: any of them may be any of its jobs'.
func sameSubmission(recs []Submission, group []pendingPair) bool {
	first := recs[group[0].rec]
	for _, p := range group[1:] {
		r := recs[p.rec]
		if r.Fingerprint != first.Fingerprint || r.ScriptHash != first.ScriptHash || r.Script != first.Script || r.Profile != first.Profile {
			return false
		}
	}
	return true
}

// linkGroup links each record of a group of one submission to a job: where
// there are more jobs than records, the earliest are left (a record is made
// before its job is submitted; one just before is someone else's); then
// pairs with a stored script first, the nearest in whole seconds (sacct's
// resolution), of equally near jobs the later.
func linkGroup(recs []Submission, jobs []pendingJob, group []pendingPair) []pendingPair {
	var ids []int
	records := map[int]bool{}
	for _, p := range group {
		records[p.rec] = true
		if !slices.Contains(ids, p.job) {
			ids = append(ids, p.job)
		}
	}
	later := func(a, b int) int { // the job submitted later first
		if c := cmp.Compare(jobs[b].submit, jobs[a].submit); c != 0 {
			return c
		}
		x, errX := strconv.ParseInt(jobs[a].id, 10, 64)
		y, errY := strconv.ParseInt(jobs[b].id, 10, 64)
		if errX == nil && errY == nil {
			return cmp.Compare(y, x)
		}
		return strings.Compare(jobs[b].id, jobs[a].id)
	}
	if len(ids) > len(records) {
		slices.SortFunc(ids, later)
		ids = ids[:len(records)]
	}
	kept := slices.DeleteFunc(slices.Clone(group), func(p pendingPair) bool { return !slices.Contains(ids, p.job) })
	slices.SortStableFunc(kept, func(a, b pendingPair) int {
		if a, b := jobs[a.job].hash != "", jobs[b.job].hash != ""; a != b {
			if a {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(a.gap/time.Second, b.gap/time.Second); c != 0 {
			return c
		}
		if c := later(a.job, b.job); c != 0 {
			return c
		}
		return recs[a.rec].Submitted.Compare(recs[b.rec].Submitted)
	})
	var links []pendingPair
	usedRec, usedJob := map[int]bool{}, map[int]bool{}
	for _, p := range kept {
		if !usedRec[p.rec] && !usedJob[p.job] {
			usedRec[p.rec], usedJob[p.job] = true, true
			links = append(links, p)
		}
	}
	return links
}

// pendingRecords are the pending submissions, oldest first.
func (s *Store) pendingRecords(ctx context.Context) ([]Submission, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT fingerprint, submitted, token, user, job_name, work_dir, cluster, script, profile,
		script_hash FROM pending_submissions ORDER BY submitted, token`)
	if err != nil {
		return nil, fmt.Errorf("read pending submissions: %w", err)
	}
	defer rows.Close()
	var out []Submission
	for rows.Next() {
		var sub Submission
		var us int64
		if err := rows.Scan(&sub.Fingerprint, &us, &sub.Token, &sub.User, &sub.JobName, &sub.WorkDir, &sub.Cluster,
			&sub.Script, &sub.Profile, &sub.ScriptHash); err != nil {
			return nil, err
		}
		sub.Submitted = time.UnixMicro(us)
		out = append(out, sub)
	}
	return out, rows.Err()
}

// pendingJobs are the jobs submitted between two times that no submission
// claims, one per sbatch answer (an array's tasks share it).
func (s *Store) pendingJobs(ctx context.Context, from, to time.Time) ([]pendingJob, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT j.cluster, j.array_job, coalesce(j.name, ''), coalesce(j.work_dir, ''),
		coalesce(j.user, ''), max(j.profile), min(j.submit) FROM jobs j
		WHERE j.submit BETWEEN ? AND ? AND j.stub = 0
			AND NOT EXISTS (SELECT 1 FROM submissions t WHERE t.cluster = j.cluster AND t.job_id = j.array_job)
		GROUP BY j.cluster, j.array_job`, from.Unix(), to.Unix())
	if err != nil {
		return nil, fmt.Errorf("read the jobs of pending submissions: %w", err)
	}
	defer rows.Close()
	var out []pendingJob
	for rows.Next() {
		var j pendingJob
		if err := rows.Scan(&j.cluster, &j.id, &j.name, &j.dir, &j.user, &j.profile, &j.submit); err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

func (s *Store) dropPending(ctx context.Context, sub Submission) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM pending_submissions WHERE fingerprint = ? AND submitted = ? AND token = ?`,
		sub.Fingerprint, sub.Submitted.UnixMicro(), sub.Token); err != nil {
		return fmt.Errorf("drop a pending submission: %w", err)
	}
	return nil
}
