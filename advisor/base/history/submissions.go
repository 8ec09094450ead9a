package history

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

// Submission links a job sbatch accepted to the script it ran.
type Submission struct {
	Cluster     string
	JobID       string // the id sbatch printed
	Fingerprint string
	Source      string // the user's script (the scripts table's path)
	Script      string // the file submitted: a sweep variant, or Source
	Profile     string // the profile asked for, "" if none
	SweepDir    string
	Workload    string
	WorkDir     string
	Stdout      string
	Stderr      string
	Submitted   time.Time
	// JobName and User find the job of a submission recorded without its
	// id (JobID ""): the wrapper's advice beside Slurm's sbatch never sees
	// sbatch's answer. It waits in pending_submissions until LinkPending.
	JobName string `json:",omitempty"`
	User    string `json:",omitempty"`
	// Token tells apart submissions recorded without their ids: unique to
	// one (the wrapper's process and clock), the same however often it is
	// drained.
	Token string `json:",omitempty"`
	// ScriptHash is the hash of the script's bytes as sbatch read them
	// (ScriptHash), for a submission recorded without its id: collect
	// checks it against the script slurmdbd stored for the job.
	ScriptHash string `json:",omitempty"`
}

// RecordSubmissions stores submissions (and their scripts) in one
// transaction. Recording a job again replaces its earlier record, so `track`
// can move a job to another script or workload.
func (s *Store) RecordSubmissions(ctx context.Context, subs []Submission) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record submissions: %w", err)
	}
	defer tx.Rollback()
	for _, sub := range subs {
		at := sub.Submitted.Unix()
		if _, err := tx.ExecContext(ctx, `INSERT INTO scripts(fingerprint, path, first_seen, last_seen) VALUES (?, ?, ?, ?)
			ON CONFLICT(fingerprint) DO UPDATE SET path = excluded.path, last_seen = max(last_seen, excluded.last_seen)`,
			sub.Fingerprint, sub.Source, at, at); err != nil {
			return fmt.Errorf("record submission %s: %w", sub.JobID, err)
		}
		if sub.JobID == "" {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO pending_submissions(fingerprint, submitted, token, user, job_name,
				work_dir, cluster, script, profile, script_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, sub.Fingerprint, sub.Submitted.UnixMicro(),
				sub.Token, sub.User, sub.JobName, sub.WorkDir, sub.Cluster, sub.Script, sub.Profile, sub.ScriptHash); err != nil {
				return fmt.Errorf("record a submission of %s: %w", sub.Script, err)
			}
			continue
		}
		// A record without a cluster name (the wrapper's, from the spool)
		// that a collect already named (AdoptSubmissions) is not recorded
		// again: two processes may drain the same spooled file.
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO submissions(cluster, job_id, fingerprint, script, profile,
			sweep_dir, workload, work_dir, stdout, stderr, submitted) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
			WHERE ? <> '' OR NOT EXISTS (SELECT 1 FROM submissions WHERE fingerprint = ? AND job_id = ? AND submitted = ? AND cluster <> '')`,
			sub.Cluster, sub.JobID, sub.Fingerprint, sub.Script, sub.Profile, sub.SweepDir, sub.Workload,
			sub.WorkDir, sub.Stdout, sub.Stderr, at, sub.Cluster, sub.Fingerprint, sub.JobID, at); err != nil {
			return fmt.Errorf("record submission %s: %w", sub.JobID, err)
		}
		// The job's name and user, when its record is here, find this
		// fingerprint's runs as an earlier version of a script of that name.
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO script_names(name, user, fingerprint)
			SELECT name, coalesce(user, ''), ? FROM jobs WHERE cluster = ? AND job_key = ? AND name IS NOT NULL`,
			sub.Fingerprint, sub.Cluster, sub.JobID); err != nil {
			return fmt.Errorf("record submission %s: %w", sub.JobID, err)
		}
	}
	return tx.Commit()
}

// AdoptSubmissions gives the submissions recorded without a cluster name
// (by the sbatch wrapper, from sbatch's output) the cluster's name; one
// already recorded under that name stays as it is.
func (s *Store) AdoptSubmissions(ctx context.Context, cluster string) error {
	if cluster == "" {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE OR IGNORE submissions SET cluster = ? WHERE cluster = ''`, cluster); err != nil {
		return fmt.Errorf("name the cluster of submissions: %w", err)
	}
	// What stays unnamed is already there under the name: the same record
	// drained twice (a history from before RecordSubmissions knew it).
	if _, err := s.db.ExecContext(ctx, `DELETE FROM submissions WHERE cluster = '' AND EXISTS (SELECT 1 FROM submissions t
		WHERE t.cluster = ? AND t.job_id = submissions.job_id AND t.fingerprint = submissions.fingerprint AND t.submitted = submissions.submitted)`,
		cluster); err != nil {
		return fmt.Errorf("name the cluster of submissions: %w", err)
	}
	return nil
}

// placeholders is "?,?,…" for n parameters of an IN list.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// jobsOfSubmission joins a submission (s, from linkedSubmissions) to its
// jobs (j) through indexes: the job sbatch printed, and the tasks of its
// array or the components of its heterogeneous job, under the cluster they
// are filed under. (An OR of the two in the join would scan the cluster's
// jobs for each submission.)
const jobsOfSubmission = `j.cluster = s.home AND j.job_key IN (SELECT s.job_id UNION ALL
	SELECT a.job_key FROM jobs a WHERE a.cluster = s.home AND a.array_job = s.job_id AND a.array_job <> a.job_key)`

// submissionsToJobs joins submissions (s) to their jobs (j), the
// submissions first: SQLite's CROSS JOIN keeps that order. jobsOfSubmission
// is a look-up from a submission only; conditions on the jobs (a job name
// and user: the earlier versions in a site-wide history) would otherwise
// lead the planner to walk the jobs first (every job of the history) and,
// for each, every submission of its cluster.
const submissionsToJobs = ` s CROSS JOIN jobs j ON ` + jobsOfSubmission

// Tracked is a submission with the jobs accounting knows for it (several for
// an array or a heterogeneous job; none before the first collect).
type Tracked struct {
	Submission
	Jobs []TrackedJob
}

// TrackedJob is the state accounting last gave for one job of a submission.
type TrackedJob struct {
	Key, ID, State string
	Stub           bool
	Profile        string // the site's profile for the GPU it had, "" if none
	Submit         int64  // unix seconds; 0 if unknown
	End            int64  // unix seconds; 0 if it has not ended or is unknown
}

// EndedAt is when the last job of t ended, zero when accounting gave no
// end time.
func (t Tracked) EndedAt() time.Time {
	var last int64
	for _, j := range t.Jobs {
		last = max(last, j.End)
	}
	if last == 0 {
		return time.Time{}
	}
	return time.Unix(last, 0)
}

// Ended reports whether accounting has the final record of every job of t.
func (t Tracked) Ended() bool {
	if len(t.Jobs) == 0 {
		return false
	}
	for _, j := range t.Jobs {
		if j.Stub || !slurm.TerminalState(j.State) {
			return false
		}
	}
	return true
}

// Unended lists the job ids of the submissions that have not ended.
func Unended(tracked []Tracked) []string {
	var ids []string
	for _, t := range tracked {
		if !t.Ended() {
			ids = append(ids, t.JobID)
		}
	}
	return ids
}

// TrackedFilter selects submissions.
type TrackedFilter struct {
	JobIDs      []string // sbatch's ids; empty: all
	SweepDir    string   // the sweep's in this directory, or in its subdirectories (InSweepDir)
	Fingerprint string   // a script's submissions
}

// Tracked lists submissions, oldest first, with their jobs' last known
// states. A submission whose jobs the history holds under another cluster
// name only (see homeCluster) is listed under that name.
func (s *Store) Tracked(ctx context.Context, f TrackedFilter) ([]Tracked, error) {
	where := []string{"1"}
	var args []any
	if len(f.JobIDs) > 0 {
		where = append(where, `s.job_id IN (`+placeholders(len(f.JobIDs))+`)`)
		for _, id := range f.JobIDs {
			args = append(args, id)
		}
	}
	if f.SweepDir != "" {
		// The sweep in the directory, or those in its subdirectories: a
		// probe's --ladder writes one per rung beneath the directory it names.
		where = append(where, `(s.sweep_dir = ? OR substr(s.sweep_dir, 1, length(?) + 1) = ? || '/')`)
		args = append(args, f.SweepDir, f.SweepDir, f.SweepDir)
	}
	if f.Fingerprint != "" {
		where = append(where, `s.fingerprint = ?`)
		args = append(args, f.Fingerprint)
	}
	with, from := s.linked(ctx, strings.Join(where, " AND "))
	q := with + `SELECT s.cluster, s.home, s.job_id, s.fingerprint, coalesce(sc.path, ''), s.script, s.profile, s.sweep_dir, s.workload,
		s.work_dir, s.stdout, s.stderr, s.submitted, j.job_key, j.job_id, j.state, j.stub, j.profile, coalesce(j.submit, 0), coalesce(j.end, 0)
		FROM ` + from + ` s LEFT JOIN scripts sc USING (fingerprint)
		LEFT JOIN jobs j ON ` + jobsOfSubmission
	q += ` ORDER BY s.submitted, CAST(s.job_id AS INTEGER), s.job_id, s.cluster, j.job_key`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list tracked jobs: %w", err)
	}
	defer rows.Close()
	var out []Tracked
	var filedUnder []string // each submission's own cluster (Cluster is its jobs')
	for rows.Next() {
		var t Tracked
		var own string
		var at int64
		var key, id, state, profile sql.NullString
		var stub sql.NullBool
		var submit, end sql.NullInt64
		if err := rows.Scan(&own, &t.Cluster, &t.JobID, &t.Fingerprint, &t.Source, &t.Script, &t.Profile, &t.SweepDir, &t.Workload,
			&t.WorkDir, &t.Stdout, &t.Stderr, &at, &key, &id, &state, &stub, &profile, &submit, &end); err != nil {
			return nil, fmt.Errorf("list tracked jobs: %w", err)
		}
		t.Submitted = time.Unix(at, 0)
		if n := len(out); n > 0 && filedUnder[n-1] == own && out[n-1].JobID == t.JobID {
			t = out[n-1]
			out, filedUnder = out[:n-1], filedUnder[:n-1]
		}
		if key.Valid {
			t.Jobs = append(t.Jobs, TrackedJob{Key: key.String, ID: id.String, State: state.String, Stub: stub.Bool,
				Profile: profile.String, Submit: submit.Int64, End: end.Int64})
		}
		out, filedUnder = append(out, t), append(filedUnder, own)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tracked jobs: %w", err)
	}
	return s.withSpooled(oncePerJob(out), f), nil
}

// withSpooled adds to tracked, a history's, the submissions with job ids
// that OpenToRead found in the spool and left there, those f selects that
// the history does not hold yet, without their jobs (the next collect
// moves them in and links them), in Tracked's order.
// InSweepDir reports whether a submission of the sweep in sweepDir is one
// of the sweep in dir: that sweep's, or one in a subdirectory of dir (a
// probe's --ladder writes a sweep per rung).
func InSweepDir(sweepDir, dir string) bool {
	return sweepDir == dir || strings.HasPrefix(sweepDir, dir+"/")
}

func (s *Store) withSpooled(tracked []Tracked, f TrackedFilter) []Tracked {
	added := false
	for _, sub := range s.spooled {
		switch {
		case sub.JobID == "",
			len(f.JobIDs) > 0 && !slices.Contains(f.JobIDs, sub.JobID),
			f.SweepDir != "" && !InSweepDir(sub.SweepDir, f.SweepDir),
			f.Fingerprint != "" && sub.Fingerprint != f.Fingerprint:
			continue
		}
		sub.Submitted = time.Unix(sub.Submitted.Unix(), 0) // as the history keeps it
		if slices.ContainsFunc(tracked, func(t Tracked) bool {
			return t.JobID == sub.JobID && t.Fingerprint == sub.Fingerprint && t.Submitted.Equal(sub.Submitted)
		}) {
			continue // drained before
		}
		tracked, added = append(tracked, Tracked{Submission: sub}), true
	}
	if added {
		slices.SortStableFunc(tracked, func(a, b Tracked) int {
			return cmp.Or(a.Submitted.Compare(b.Submitted), cmp.Compare(jobNumber(a.JobID), jobNumber(b.JobID)),
				strings.Compare(a.JobID, b.JobID), strings.Compare(a.Cluster, b.Cluster))
		})
	}
	return tracked
}

// jobNumber is a job id as SQLite's CAST(id AS INTEGER) reads it: its
// leading digits, 0 where there are none.
func jobNumber(id string) int64 {
	var n int64
	for _, c := range id {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// oncePerJob drops the submissions of a job that a later submission links
// too (the same id under two cluster names, linked to the same jobs or to
// the same jobs under two names): the later one stands, as tracking a job
// again moves it.
func oncePerJob(tracked []Tracked) []Tracked {
	latest := map[string]int{} // the jobs, as one string, to the last submission linking them
	for i, t := range tracked {
		if len(t.Jobs) > 0 {
			latest[trackedJobs(t)] = i
		}
	}
	out := tracked[:0]
	for i, t := range tracked {
		if len(t.Jobs) == 0 || latest[trackedJobs(t)] == i {
			out = append(out, t)
		}
	}
	return out
}

// trackedJobs names a submission's jobs by id, key and submit time, which
// do not change with the cluster's name.
func trackedJobs(t Tracked) string {
	var b strings.Builder
	b.WriteString(t.JobID)
	for _, j := range t.Jobs {
		fmt.Fprintf(&b, " %s@%d", j.Key, j.Submit)
		if j.Submit == 0 {
			b.WriteString(t.Cluster) // unknown times: only the same record is the same job
		}
	}
	return b.String()
}

// WorkloadCount is a workload tag and how many submissions carry it (an
// array counts once).
type WorkloadCount struct {
	Workload    string
	Submissions int
}

// Workloads lists the workload tags of the history's submissions, by name.
func (s *Store) Workloads(ctx context.Context) ([]WorkloadCount, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT workload, count(*) FROM submissions
		WHERE workload <> '' GROUP BY workload ORDER BY workload`)
	if err != nil {
		return nil, fmt.Errorf("list workloads: %w", err)
	}
	defer rows.Close()
	var out []WorkloadCount
	for rows.Next() {
		var w WorkloadCount
		if err := rows.Scan(&w.Workload, &w.Submissions); err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}
