package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// A history files each job under its cluster's name. The name a command
// uses comes from --cluster, slurmctld, or (when Slurm cannot be asked) the
// name the history last used, which it keeps in its settings. Histories made
// before the names agreed (a dump imported as "local" beside jobs tracked as
// slurmctld's name) hold submissions whose jobs are under another name: the
// queries below find them there when exactly one cluster has the job.

// settingCluster is the settings key of the cluster name last used.
const settingCluster = "cluster"

// ClusterName is the cluster name the history last filed jobs under, ""
// when it has none.
func (s *Store) ClusterName(ctx context.Context) (string, error) {
	var name string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, settingCluster).Scan(&name)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil
	case err != nil && strings.Contains(err.Error(), "no such table"):
		return "", nil // an older schema, read-only: it remembers none
	case err != nil:
		return "", fmt.Errorf("read the history's cluster name: %w", err)
	}
	return name, nil
}

// RememberCluster keeps name as the cluster the history files jobs under,
// for the commands that cannot ask Slurm. It writes only when the name
// changed, so that it takes no lock on every command.
func (s *Store) RememberCluster(ctx context.Context, name string) error {
	if name == "" {
		return nil
	}
	if old, err := s.ClusterName(ctx); err != nil || old == name {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO settings(key, value) VALUES (?, ?)
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`, settingCluster, name); err != nil {
		return fmt.Errorf("remember the cluster name: %w", err)
	}
	return nil
}

// jobClusters is a common table expression of the clusters of the jobs
// table, read through its primary key one cluster at a time (a skip scan):
// a handful of steps whatever the number of jobs.
const jobClusters = `job_clusters(name) AS (SELECT (SELECT min(cluster) FROM jobs)
	UNION ALL SELECT (SELECT min(y.cluster) FROM jobs y WHERE y.cluster > job_clusters.name) FROM job_clusters WHERE job_clusters.name IS NOT NULL)`

// submissionClusters is jobClusters for the submissions: the cluster names
// they are filed under (the empty name among them), so that a job id is
// looked up under each through the primary key.
const submissionClusters = `submission_clusters(name) AS (SELECT (SELECT min(cluster) FROM submissions)
	UNION ALL SELECT (SELECT min(y.cluster) FROM submissions y WHERE y.cluster > submission_clusters.name)
	FROM submission_clusters WHERE submission_clusters.name IS NOT NULL)`

// hasJobUnder is true when cluster holds a job of submission s that meets
// cond (about job x): the job sbatch printed, a task of its array or a
// component of its heterogeneous job. Both are index lookups.
func hasJobUnder(cluster, cond string) string {
	return `(EXISTS (SELECT 1 FROM jobs x WHERE x.cluster = ` + cluster + ` AND x.job_key = s.job_id AND ` + cond + `)
		OR EXISTS (SELECT 1 FROM jobs x WHERE x.cluster = ` + cluster + ` AND x.array_job = s.job_id AND x.array_job <> x.job_key AND ` + cond + `))`
}

// submittedBefore holds for a job x submitted before submission s was
// recorded, or when either time is unknown. A day of slack: a dump's times
// are read in this host's time zone, which may be hours from the site's.
const submittedBefore = `(s.submitted <= 0 OR x.submit IS NULL OR x.submit <= s.submitted + 86400)`

// homeCluster is the cluster submission s's jobs are under: its own when it
// has them; else the one cluster that has its job id, submitted before the
// submission was recorded (another cluster's later job of the same number is
// not it), or the one of several that hold it as the same job (its
// submit time: a dump filed under two names); else (no cluster, or several
// with different jobs) its own. It needs jobClusters.
var homeCluster = `CASE WHEN ` + hasJobUnder("s.cluster", "1") + ` THEN s.cluster ELSE coalesce(
	(SELECT CASE WHEN count(*) = 1 OR count(DISTINCT t.submit) = 1 AND count(t.submit) = count(*) THEN max(c.name) END
		FROM job_clusters c LEFT JOIN jobs t ON t.cluster = c.name AND t.job_key = s.job_id
		WHERE c.name IS NOT NULL AND ` + hasJobUnder("c.name", submittedBefore) + `),
	s.cluster) END`

// linkedSubmissions selects the submissions where holds (as s), each with
// the cluster its jobs are under as home. The statement needs jobClusters.
func linkedSubmissions(where string) string {
	return `(SELECT s.*, ` + homeCluster + ` AS home FROM submissions s WHERE ` + where + `)`
}

// linked is linkedSubmissions with the start of its statement ("WITH
// RECURSIVE …"), or, when every job and named submission of the history is
// under one cluster name (the usual case), the submissions as they are,
// home their own cluster: a look across names costs the sbatch wrapper a
// millisecond of statement preparation for nothing.
func (s *Store) linked(ctx context.Context, where string) (with, from string) {
	if s.oneCluster(ctx) {
		return "", ownClusterSubmissions(where)
	}
	return `WITH RECURSIVE ` + jobClusters + ` `, linkedSubmissions(where)
}

// ownClusterSubmissions are the submissions where, each home under its
// own cluster name: no look across names.
func ownClusterSubmissions(where string) string {
	return `(SELECT s.*, s.cluster AS home FROM submissions s WHERE ` + where + `)`
}

// oneCluster reports whether the history's jobs are under one cluster name
// (or there are none) and so are its submissions that name one (the
// wrapper's records take theirs at the next collect). Each bound is an
// index look-up.
func (s *Store) oneCluster(ctx context.Context) bool {
	var jobsLo, jobsHi, subsLo, subsHi sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT (SELECT min(cluster) FROM jobs), (SELECT max(cluster) FROM jobs),
		(SELECT min(cluster) FROM submissions WHERE cluster > ''), (SELECT max(cluster) FROM submissions WHERE cluster > '')`).
		Scan(&jobsLo, &jobsHi, &subsLo, &subsHi)
	switch {
	case err != nil:
		return false
	case !jobsLo.Valid:
		return true // no jobs: nothing to look across
	}
	return jobsLo == jobsHi && (!subsLo.Valid || subsLo == jobsLo && subsHi == jobsLo)
}

// RelinkSubmissions files under their jobs' cluster the submissions whose
// jobs the history holds under another name only (see homeCluster), so that
// every query finds them; it returns how many moved. Where that name has a
// submission of the job too, the newer stays (a user's before one linked
// from slurmdbd's script; then the later recorded submission time), as
// tracking a job again moves it: two would link the job to two scripts or
// workloads. Of two recorded at the same time, both stay as they are.
// Submissions made from slurmdbd's scripts (collect --scripts) are never
// moved: they come from their jobs.
func (s *Store) RelinkSubmissions(ctx context.Context) (int, error) {
	return s.relinkSubmissions(ctx, `s.script NOT LIKE 'sacct:%'`, nil, false)
}

// MoveSubmissions files the submissions of ids recorded under cluster (by
// track) under their jobs' cluster, as RelinkSubmissions does, in place of
// any submission of the same job there, however recorded: tracking a job
// again moves it to the new script or workload. It returns how many moved.
func (s *Store) MoveSubmissions(ctx context.Context, cluster string, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	args := []any{cluster}
	for _, id := range ids {
		args = append(args, id)
	}
	return s.relinkSubmissions(ctx, `s.cluster = ? AND s.job_id IN (`+placeholders(len(ids))+`)`, args, true)
}

// newerSubmission holds where submission f (the one of the other name) is
// newer than the submissions row: a user's before one linked from
// slurmdbd's script, then the later submission time.
const newerSubmission = `(f.script NOT LIKE 'sacct:%', f.submitted) > (submissions.script NOT LIKE 'sacct:%', submissions.submitted)`

// relinkSubmissions moves the submissions where selects (as s, with args)
// to their jobs' cluster; replace: in place of the one there, else the newer
// of the two stays.
func (s *Store) relinkSubmissions(ctx context.Context, where string, args []any, replace bool) (int, error) {
	rows, err := s.db.QueryContext(ctx, `WITH RECURSIVE `+jobClusters+`
		SELECT cluster, job_id, home FROM `+linkedSubmissions(where)+` WHERE home <> cluster`, args...)
	if err != nil {
		return 0, fmt.Errorf("link submissions to their jobs: %w", err)
	}
	var moves [][3]string
	for rows.Next() {
		var m [3]string
		if err := rows.Scan(&m[0], &m[1], &m[2]); err != nil {
			rows.Close()
			return 0, fmt.Errorf("link submissions to their jobs: %w", err)
		}
		moves = append(moves, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(moves) == 0 {
		return 0, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("link submissions to their jobs: %w", err)
	}
	defer tx.Rollback()
	newer := newerSubmission
	if replace {
		newer = "1" // whatever is there gives way
	}
	// ?1 the name a submission is under, ?2 its jobs', ?3 the job id.
	steps := []string{
		// The one there, when this one is newer.
		`DELETE FROM submissions WHERE cluster = ?2 AND job_id = ?3 AND EXISTS (SELECT 1 FROM submissions f
			WHERE f.cluster = ?1 AND f.job_id = ?3 AND ` + newer + `)`,
		`UPDATE OR IGNORE submissions SET cluster = ?2 WHERE cluster = ?1 AND job_id = ?3`,
		// This one, when the one there is newer (none is left there once
		// this one replaced it).
		`DELETE FROM submissions WHERE cluster = ?1 AND job_id = ?3 AND EXISTS (SELECT 1 FROM submissions f
			WHERE f.cluster = ?2 AND f.job_id = ?3 AND ` + newerSubmission + `)`,
	}
	moved := 0
	for _, m := range moves {
		for i, q := range steps {
			res, err := tx.ExecContext(ctx, q, m[0], m[2], m[1])
			if err != nil {
				return 0, fmt.Errorf("link submission %s to its job: %w", m[1], err)
			}
			if i != 1 {
				continue
			}
			if n, err := res.RowsAffected(); err == nil {
				moved += int(n)
			}
		}
	}
	return moved, tx.Commit()
}

// JobClusters are the clusters a job id is held under.
type JobClusters struct {
	Names []string // by name
	// Same: every name holds the same job (its submit time), or at most one
	// holds it; else the id is ambiguous.
	Same bool
}

// ClustersOfJob lists the clusters the history holds job id under (the job
// sbatch printed, or its array's or heterogeneous job's), and whether they
// hold the same job.
func (s *Store) ClustersOfJob(ctx context.Context, id string) (JobClusters, error) {
	rows, err := s.db.QueryContext(ctx, `WITH RECURSIVE `+jobClusters+`
		SELECT c.name, (SELECT t.submit FROM jobs t WHERE t.cluster = c.name AND t.job_key = s.job_id)
		FROM job_clusters c, (SELECT ? AS job_id) s WHERE c.name IS NOT NULL AND `+hasJobUnder("c.name", "1")+`
		ORDER BY c.name`, id)
	if err != nil {
		return JobClusters{}, fmt.Errorf("find job %s: %w", id, err)
	}
	defer rows.Close()
	out := JobClusters{Same: true}
	var first sql.NullInt64
	for rows.Next() {
		var n string
		var submit sql.NullInt64
		if err := rows.Scan(&n, &submit); err != nil {
			return JobClusters{}, fmt.Errorf("find job %s: %w", id, err)
		}
		if len(out.Names) == 0 {
			first = submit
		} else if !submit.Valid || !first.Valid || submit.Int64 != first.Int64 {
			out.Same = false
		}
		out.Names = append(out.Names, n)
	}
	return out, rows.Err()
}
