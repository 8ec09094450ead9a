package history

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"
)

// Pending submissions: the sbatch wrapper's records of submissions whose
// job id it never saw (its advice runs beside Slurm's sbatch, which the
// shim runs in its own place). Each waits until collect has the job's
// accounting record, then LinkPending files it as a submission.
const (
	// PendingEarly and PendingLate bound the job's submit time around the
	// wrapper's record: the clocks of a login node and of slurmctld differ
	// by a little, and sbatch may retry a busy controller for a while.
	PendingEarly = time.Minute
	PendingLate  = 2 * time.Minute
	// PendingRefused is how long a record whose time accounting was asked
	// about may go without a job before it is taken for one sbatch refused
	// and dropped: slurmdbd may lag slurmctld by minutes, even hours when it
	// was down.
	PendingRefused = 24 * time.Hour
	// PendingKept is how long any record waits: one whose time accounting
	// was never asked about (no collect for a week) goes too.
	PendingKept = 7 * 24 * time.Hour
)

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
	cluster, id, name, dir, user string
	submit                       int64 // unix seconds
}

// LinkPending files pending submissions as the submissions of their jobs:
// a job of the same name, directory (as paths, cleaned), user and cluster
// (where the record names them), submitted from PendingEarly before to
// PendingLate after the record, that no submission claims. Pairs are made
// nearest in time first, each record and job once: a submission sbatch
// refused does not take the job of the corrected one that followed it.
// Where accounting was asked about every job submitted since asked (the
// zero time: it was not), a record from then on, older than
// PendingRefused, that found no job was refused by sbatch and is dropped.
// It returns how many were linked and how many dropped.
func (s *Store) LinkPending(ctx context.Context, now, asked time.Time) (linked, dropped int, err error) {
	recs, err := s.pendingRecords(ctx)
	if err != nil || len(recs) == 0 {
		return 0, 0, err
	}
	jobs, err := s.pendingJobs(ctx, recs[0].Submitted.Add(-PendingEarly), recs[len(recs)-1].Submitted.Add(PendingLate))
	if err != nil {
		return 0, 0, err
	}
	type pair struct {
		rec, job int
		gap      time.Duration
	}
	var pairs []pair
	for i, r := range recs {
		for k, j := range jobs {
			at := time.Unix(j.submit, 0)
			if j.name != r.JobName || filepath.Clean(j.dir) != filepath.Clean(r.WorkDir) || (r.User != "" && j.user != r.User) ||
				(r.Cluster != "" && j.cluster != r.Cluster) || at.Before(r.Submitted.Add(-PendingEarly)) || at.After(r.Submitted.Add(PendingLate)) {
				continue
			}
			pairs = append(pairs, pair{i, k, (at.Sub(r.Submitted)).Abs()})
		}
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(a.gap, b.gap) })
	linkedRec, usedJob := map[int]bool{}, map[int]bool{}
	for _, p := range pairs {
		if linkedRec[p.rec] || usedJob[p.job] {
			continue
		}
		linkedRec[p.rec], usedJob[p.job] = true, true
		sub := recs[p.rec]
		sub.Cluster, sub.JobID, sub.Source = jobs[p.job].cluster, jobs[p.job].id, sub.Script
		if err := s.RecordSubmissions(ctx, []Submission{sub}); err != nil {
			return len(linkedRec) - 1, 0, err
		}
		if err := s.dropPending(ctx, recs[p.rec]); err != nil {
			return len(linkedRec), 0, err
		}
	}
	for i, r := range recs {
		if !linkedRec[i] && !asked.IsZero() && !r.Submitted.Before(asked) && now.Sub(r.Submitted) > PendingRefused {
			if err := s.dropPending(ctx, r); err != nil {
				return len(linkedRec), dropped, err
			}
			dropped++
		}
	}
	return len(linkedRec), dropped, nil
}

// pendingRecords are the pending submissions, oldest first.
func (s *Store) pendingRecords(ctx context.Context) ([]Submission, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT fingerprint, submitted, token, user, job_name, work_dir, cluster, script, profile
		FROM pending_submissions ORDER BY submitted, token`)
	if err != nil {
		return nil, fmt.Errorf("read pending submissions: %w", err)
	}
	defer rows.Close()
	var out []Submission
	for rows.Next() {
		var sub Submission
		var us int64
		if err := rows.Scan(&sub.Fingerprint, &us, &sub.Token, &sub.User, &sub.JobName, &sub.WorkDir, &sub.Cluster,
			&sub.Script, &sub.Profile); err != nil {
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
		coalesce(j.user, ''), min(j.submit) FROM jobs j
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
		if err := rows.Scan(&j.cluster, &j.id, &j.name, &j.dir, &j.user, &j.submit); err != nil {
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
