package history

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// One job is one record. A history can file the same job under two names:
// a dump imported where Slurm could not be asked goes under a fallback name
// ("local"), and a later collect with Slurm files the same jobs under the
// cluster's real name. MergeFallbackJobs makes them one again; readers
// (History, Tracked) count a job held under two names once in the meantime.
// A job is the same when its JobIDRaw and its submit time are: job numbers
// start again on a new cluster, or after a reset, but not in the same second.

// Refiled counts the jobs a merge filed under a real name.
type Refiled struct {
	From, To string
	Jobs     int
}

// MergeFallbackJobs files under the cluster's real name each job the
// history holds under a fallback name (one of fallbacks: names that stand
// for a cluster not known when the jobs were filed) that exactly one other
// name holds too: the same JobIDRaw with the same submit time, or no submit
// time on the fallback's record (a dump without the column). Everything
// keyed by the job goes with it: its output's evidence, its emulated runs
// (where the real name has none), the mark that slurmdbd has no script for
// it, and the submissions that link it (those of every job of the id sbatch
// printed, once the fallback holds none of them).
// Where the real name has its own record, the complete one stays (a
// placeholder or a running job's record gives way to the final one), with
// the newer scan of its output and the newer submission (one a user made
// before one linked from slurmdbd's script). It returns how many jobs moved,
// by name; the work is a lookup of each fallback job under the real names.
func (s *Store) MergeFallbackJobs(ctx context.Context, fallbacks []string) ([]Refiled, error) {
	names, err := s.clusterNames(ctx)
	if err != nil {
		return nil, err
	}
	var real []string
	for _, n := range names {
		if !slices.Contains(fallbacks, n) {
			real = append(real, n)
		}
	}
	var out []Refiled
	for _, from := range fallbacks {
		if len(real) == 0 || !slices.Contains(names, from) {
			continue
		}
		twins, err := s.twinsOf(ctx, from, real)
		if err != nil {
			return out, err
		}
		moved, err := s.refile(ctx, from, twins)
		if err != nil {
			return out, err
		}
		out = append(out, moved...)
	}
	return out, nil
}

// clusterNames are the names the jobs table files jobs under.
func (s *Store) clusterNames(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `WITH RECURSIVE `+jobClusters+` SELECT name FROM job_clusters WHERE name IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("list the history's clusters: %w", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("list the history's clusters: %w", err)
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// twin is a job of a fallback name and the real name that holds it too.
type twin struct{ key, to string }

// twinsOf lists the jobs of from that exactly one of real holds too.
func (s *Store) twinsOf(ctx context.Context, from string, real []string) ([]twin, error) {
	var args []any
	for _, r := range real {
		args = append(args, r)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT f.job_key, max(r.cluster) FROM jobs f
		JOIN jobs r ON r.cluster IN (`+placeholders(len(real))+`) AND r.job_key = f.job_key
		WHERE f.cluster = ? AND (r.submit = f.submit OR f.submit IS NULL)
		GROUP BY f.job_key HAVING count(*) = 1 ORDER BY max(r.cluster), f.job_key`, append(args, from)...)
	if err != nil {
		return nil, fmt.Errorf("find the jobs filed under %s: %w", from, err)
	}
	defer rows.Close()
	var out []twin
	for rows.Next() {
		var t twin
		if err := rows.Scan(&t.key, &t.to); err != nil {
			return nil, fmt.Errorf("find the jobs filed under %s: %w", from, err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// refile moves the twins of from to their real names, in one transaction.
func (s *Store) refile(ctx context.Context, from string, twins []twin) ([]Refiled, error) {
	if len(twins) == 0 {
		return nil, nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("file jobs under their cluster: %w", err)
	}
	defer tx.Rollback()
	counts := map[string]int{}
	ids := map[string][]string{} // the ids sbatch printed, by the name their jobs went to
	for _, t := range twins {
		var arrayJob string
		if err := tx.QueryRowContext(ctx, `SELECT array_job FROM jobs WHERE cluster = ? AND job_key = ?`, from, t.key).Scan(&arrayJob); err != nil {
			return nil, fmt.Errorf("file job %s under %s: %w", t.key, t.to, err)
		}
		if err := refileJob(ctx, tx, from, t); err != nil {
			return nil, fmt.Errorf("file job %s under %s: %w", t.key, t.to, err)
		}
		counts[t.to]++
		ids[t.to] = append(ids[t.to], t.key)
		if arrayJob != t.key {
			ids[t.to] = append(ids[t.to], arrayJob)
		}
	}
	for to, list := range ids {
		slices.Sort(list)
		for _, id := range slices.Compact(list) {
			if err := refileSubmission(ctx, tx, from, to, id); err != nil {
				return nil, fmt.Errorf("file the submission of job %s under %s: %w", id, to, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("file jobs under their cluster: %w", err)
	}
	var out []Refiled
	for to, n := range counts {
		out = append(out, Refiled{From: from, To: to, Jobs: n})
	}
	slices.SortFunc(out, func(a, b Refiled) int { return strings.Compare(a.To, b.To) })
	return out, nil
}

// refileJob moves one job of from, with its scan, emulated runs and
// unscripted mark, to t.to, where the complete record and the newer scan
// (and the real name's emulated runs) stay.
func refileJob(ctx context.Context, tx *sql.Tx, from string, t twin) error {
	for _, q := range []string{
		// The fallback's record replaces the real one when that is a
		// placeholder, or not ended, and it is not.
		`UPDATE jobs SET (updated, ` + jobColumns + `) = (SELECT updated, ` + jobColumns + ` FROM jobs f WHERE f.cluster = ?1 AND f.job_key = ?3)
			WHERE cluster = ?2 AND job_key = ?3 AND EXISTS (SELECT 1 FROM jobs f WHERE f.cluster = ?1 AND f.job_key = ?3
			AND (f.stub < jobs.stub OR f.stub = jobs.stub AND f.unsettled < jobs.unsettled))`,
		`DELETE FROM outputs WHERE cluster = ?2 AND job_key = ?3 AND EXISTS (SELECT 1 FROM outputs f
			WHERE f.cluster = ?1 AND f.job_key = ?3 AND (f.mtime, f.size) > (outputs.mtime, outputs.size))`,
		`UPDATE OR IGNORE outputs SET cluster = ?2 WHERE cluster = ?1 AND job_key = ?3`,
		`DELETE FROM outputs WHERE cluster = ?1 AND job_key = ?3`,
		// Its emulated runs, unless the real name has the job's own.
		`DELETE FROM emulated_runs WHERE cluster = ?1 AND job_key = ?3
			AND EXISTS (SELECT 1 FROM emulated_runs r WHERE r.cluster = ?2 AND r.job_key = ?3)`,
		`UPDATE emulated_runs SET cluster = ?2 WHERE cluster = ?1 AND job_key = ?3`,
		`UPDATE OR IGNORE unscripted SET cluster = ?2 WHERE cluster = ?1 AND job_key = ?3`,
		`DELETE FROM unscripted WHERE cluster = ?1 AND job_key = ?3`,
		`DELETE FROM jobs WHERE cluster = ?1 AND job_key = ?3`,
	} {
		if _, err := tx.ExecContext(ctx, q, from, t.to, t.key); err != nil {
			return err
		}
	}
	return nil
}

// refileSubmission moves the submission of id from from to to once from
// holds no job of it; where to has one too, the newer stays (a user's
// before one linked from slurmdbd's script).
func refileSubmission(ctx context.Context, tx *sql.Tx, from, to, id string) error {
	var left bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM jobs WHERE cluster = ?1 AND job_key = ?2)
		OR EXISTS (SELECT 1 FROM jobs WHERE cluster = ?1 AND array_job = ?2 AND array_job <> job_key)`, from, id).Scan(&left); err != nil || left {
		return err
	}
	for _, q := range []string{
		`DELETE FROM submissions WHERE cluster = ?2 AND job_id = ?3 AND EXISTS (SELECT 1 FROM submissions f
			WHERE f.cluster = ?1 AND f.job_id = ?3
			AND (f.script NOT LIKE 'sacct:%', f.submitted) > (submissions.script NOT LIKE 'sacct:%', submissions.submitted))`,
		`UPDATE OR IGNORE submissions SET cluster = ?2 WHERE cluster = ?1 AND job_id = ?3`,
		`DELETE FROM submissions WHERE cluster = ?1 AND job_id = ?3`,
	} {
		if _, err := tx.ExecContext(ctx, q, from, to, id); err != nil {
			return err
		}
	}
	return nil
}
