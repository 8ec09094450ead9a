package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// activeStateList is slurm.ActiveStates as an SQL list, for schema 7's
// migration of the jobs it finds.
const activeStateList = `('PENDING', 'RUNNING', 'SUSPENDED', 'REQUEUED', 'REQUEUE_HOLD', 'REQUEUE_FED',
	'RESIZING', 'SIGNALING', 'STAGE_OUT', 'CONFIGURING', 'COMPLETING', 'RESV_DEL_HOLD', 'SPECIAL_EXIT')`

// Watermark is where the next incremental collect of scope starts; false
// when no collect of that scope has finished yet.
func (s *Store) Watermark(ctx context.Context, scope string) (time.Time, bool, error) {
	var since int64
	err := s.db.QueryRowContext(ctx, `SELECT since FROM watermarks WHERE scope = ?`, scope).Scan(&since)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read the watermark of %s: %w", scope, err)
	}
	return time.Unix(since, 0), true, nil
}

// SetWatermark records where the next incremental collect of scope starts.
func (s *Store) SetWatermark(ctx context.Context, scope string, since time.Time) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO watermarks(scope, since, updated) VALUES (?, ?, ?)
		ON CONFLICT(scope) DO UPDATE SET since = excluded.since, updated = excluded.updated`,
		scope, since.Unix(), time.Now().Unix())
	if err != nil {
		return fmt.Errorf("record the watermark of %s: %w", scope, err)
	}
	return nil
}

// LatestJobTime is the latest time (submitted, started or ended) that the
// jobs of these clusters and users (none: any) hold, not after before:
// where the collects of that selection have read accounting up to. False
// where it holds none.
func (s *Store) LatestJobTime(ctx context.Context, clusters, users []string, before time.Time) (time.Time, bool, error) {
	sel, args := selection(clusters, users)
	q := `SELECT coalesce(max(max(CASE WHEN submit <= ?1 THEN submit ELSE 0 END, CASE WHEN start <= ?1 THEN start ELSE 0 END,
		CASE WHEN end <= ?1 THEN end ELSE 0 END)), 0) FROM jobs WHERE 1` + sel
	var latest int64
	if err := s.db.QueryRowContext(ctx, q, append([]any{before.Unix()}, args...)...).Scan(&latest); err != nil {
		return time.Time{}, false, fmt.Errorf("find where the history's jobs end: %w", err)
	}
	if latest <= 0 {
		return time.Time{}, false, nil
	}
	return time.Unix(latest, 0), true, nil
}

// JobRef names a job in the history.
type JobRef struct{ Cluster, Key string }

// UnsettledJobs lists the jobs whose record may still change (pending,
// running, ..., or a placeholder), of these clusters and users (none: any),
// through the jobs_unsettled index.
func (s *Store) UnsettledJobs(ctx context.Context, clusters, users []string) ([]JobRef, error) {
	q, args := unsettledJobsQuery(clusters, users)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list unsettled jobs: %w", err)
	}
	defer rows.Close()
	var out []JobRef
	for rows.Next() {
		var r JobRef
		if err := rows.Scan(&r.Cluster, &r.Key); err != nil {
			return nil, fmt.Errorf("list unsettled jobs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func unsettledJobsQuery(clusters, users []string) (string, []any) {
	sel, args := selection(clusters, users)
	return `SELECT cluster, job_key FROM jobs WHERE unsettled = 1` + sel, args
}

// selection is the condition on jobs of these clusters and users (none:
// any), to add to a WHERE clause, and its arguments.
func selection(clusters, users []string) (string, []any) {
	var q string
	var args []any
	if len(clusters) > 0 {
		q += ` AND cluster IN (` + placeholders(len(clusters)) + `)`
		for _, c := range clusters {
			args = append(args, c)
		}
	}
	if len(users) > 0 {
		q += ` AND user IN (` + placeholders(len(users)) + `)`
		for _, u := range users {
			args = append(args, u)
		}
	}
	return q, args
}
