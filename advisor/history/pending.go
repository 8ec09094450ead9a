package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Pending submissions: the sbatch wrapper's records of submissions whose
// job id it never saw (its advice runs beside Slurm's sbatch, which the
// shim runs in its own place). Each waits until collect has the job's
// accounting record, then LinkPending files it as a submission.
const (
	// pendingEarly and PendingLate bound the job's submit time around the
	// wrapper's: clocks of login nodes and slurmctld differ by a little,
	// and sbatch may retry a busy controller for a while.
	pendingEarly = 5 * time.Second
	PendingLate  = 2 * time.Minute
	// PendingKept is how long a pending submission waits for its job: a
	// job Slurm accepted is in accounting within seconds, so one that never
	// shows was refused by sbatch.
	PendingKept = 24 * time.Hour
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

// LinkPending files each pending submission as the submission of its job:
// the job of the same user (when the record names one), name, directory
// and cluster (when it names one), submitted from pendingEarly before to
// pendingLate after it, that no submission claims yet; of several, the
// nearest in time. Those older than PendingKept at now that found none are
// dropped. It returns how many were linked.
func (s *Store) LinkPending(ctx context.Context, now time.Time) (int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT fingerprint, submitted, token, user, job_name, work_dir, cluster, script, profile
		FROM pending_submissions ORDER BY submitted, token`)
	if err != nil {
		return 0, fmt.Errorf("read pending submissions: %w", err)
	}
	type pending struct {
		sub Submission
		us  int64
	}
	var all []pending
	for rows.Next() {
		var p pending
		if err := rows.Scan(&p.sub.Fingerprint, &p.us, &p.sub.Token, &p.sub.User, &p.sub.JobName, &p.sub.WorkDir, &p.sub.Cluster,
			&p.sub.Script, &p.sub.Profile); err != nil {
			rows.Close()
			return 0, err
		}
		p.sub.Submitted = time.UnixMicro(p.us)
		all = append(all, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	linked := 0
	for _, p := range all {
		sub := p.sub
		at := sub.Submitted.Unix()
		err := s.db.QueryRowContext(ctx, `SELECT j.cluster, j.array_job FROM jobs j
			WHERE j.name = ? AND coalesce(j.work_dir, '') = ? AND (? = '' OR coalesce(j.user, '') = ?) AND (? = '' OR j.cluster = ?)
				AND j.submit BETWEEN ? AND ? AND j.stub = 0
				AND NOT EXISTS (SELECT 1 FROM submissions t WHERE t.cluster = j.cluster AND t.job_id = j.array_job)
			ORDER BY abs(j.submit - ?), j.array_job LIMIT 1`,
			sub.JobName, sub.WorkDir, sub.User, sub.User, sub.Cluster, sub.Cluster,
			at-int64(pendingEarly/time.Second), at+int64(PendingLate/time.Second), at).Scan(&sub.Cluster, &sub.JobID)
		switch {
		case err == nil:
		case errors.Is(err, sql.ErrNoRows):
			if now.Sub(sub.Submitted) > PendingKept {
				if err := s.dropPending(ctx, sub); err != nil {
					return linked, err
				}
			}
			continue
		default:
			return linked, fmt.Errorf("link a pending submission: %w", err)
		}
		pendingSub := p.sub
		sub.Source = sub.Script
		if err := s.RecordSubmissions(ctx, []Submission{sub}); err != nil {
			return linked, err
		}
		if err := s.dropPending(ctx, pendingSub); err != nil {
			return linked, err
		}
		linked++
	}
	return linked, nil
}

func (s *Store) dropPending(ctx context.Context, sub Submission) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM pending_submissions WHERE fingerprint = ? AND submitted = ? AND token = ?`,
		sub.Fingerprint, sub.Submitted.UnixMicro(), sub.Token); err != nil {
		return fmt.Errorf("drop a pending submission: %w", err)
	}
	return nil
}
