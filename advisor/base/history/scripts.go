package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/migadvisor/migadvisor/internal/atomicfile"
	"github.com/migadvisor/migadvisor/slurm"
)

// UnlinkedJob is a job with a GPU profile that no submission links to a
// script: one that was not submitted through migadvisor (or not by this
// history's user).
type UnlinkedJob struct {
	Cluster, Key, Profile, WorkDir string
	JobID                          string // as users see it: 123, 123_4
	Submit                         int64  // unix seconds
	Started                        bool   // it ran (a start, or time elapsed): slurmdbd stores a batch script when its job starts
}

// UnlinkedJobs lists up to limit ended single-profile GPU jobs, newest
// first, that no submission names and whose script was not already found
// missing.
func (s *Store) UnlinkedJobs(ctx context.Context, limit int) ([]UnlinkedJob, error) {
	args := activeStateArgs()
	return s.unlinkedJobs(ctx, unlinkedJobsQuery(len(args))+` ORDER BY j.submit DESC LIMIT ?`, append(args, limit))
}

// UnlinkedJobsAmong lists the jobs UnlinkedJobs would list whose id is
// among ids, as `sacct --batch-script` names them: a JobIDRaw, or an array
// task's or het component's id as users see it (18_0, 123+1), filed under
// clusters (none: under every cluster name the history holds).
func (s *Store) UnlinkedJobsAmong(ctx context.Context, ids, clusters []string) ([]UnlinkedJob, error) {
	if len(clusters) == 0 {
		var err error
		if clusters, err = s.clusterNames(ctx); err != nil || len(clusters) == 0 {
			return nil, err
		}
	}
	var keys, arrays []string
	raw := map[string]bool{}   // the ids asked for as JobIDRaw
	tasks := map[string]bool{} // the array tasks' and het components' ids asked for (18_0, 123+1)
	for _, id := range ids {
		// An array's task (18_3) or a het job's component (123+1).
		if i := strings.IndexAny(id, "_+"); i > 0 {
			// The task whose JobIDRaw is its array's id (the last, as
			// Slurm numbers them) is found by its key.
			keys, arrays = append(keys, id[:i]), append(arrays, id[:i])
			tasks[id] = true
		} else {
			keys = append(keys, id)
			raw[id] = true
		}
	}
	var out []UnlinkedJob
	seen := map[[2]string]bool{}
	// Each query reads the jobs by index: (cluster, job_key), the primary
	// key, and jobs_by_array_job, whose condition the query repeats.
	for _, by := range []struct {
		ids  []string
		cond string
	}{{keys, `j.job_key IN (%s)`}, {arrays, `j.array_job IN (%s) AND j.array_job <> j.job_key`}} {
		const chunk = 400
		for start := 0; start < len(by.ids); start += chunk {
			part := by.ids[start:min(start+chunk, len(by.ids))]
			args := activeStateArgs()
			for _, c := range clusters {
				args = append(args, c)
			}
			for _, id := range part {
				args = append(args, id)
			}
			q := unlinkedJobsQuery(len(slurm.ActiveStates)) + ` AND j.cluster IN (` + placeholders(len(clusters)) + `) AND ` +
				fmt.Sprintf(by.cond, placeholders(len(part)))
			jobs, err := s.unlinkedJobs(ctx, q, args)
			if err != nil {
				return nil, err
			}
			for _, j := range jobs {
				if k := [2]string{j.Cluster, j.Key}; (raw[j.Key] || tasks[j.JobID]) && !seen[k] {
					seen[k] = true
					out = append(out, j)
				}
			}
		}
	}
	return out, nil
}

func activeStateArgs() []any {
	args := []any{}
	for _, st := range slurm.ActiveStates {
		args = append(args, st)
	}
	return args
}

// unlinkedJobsQuery selects the jobs UnlinkedJobs lists, for states
// placeholders of slurm.ActiveStates.
func unlinkedJobsQuery(states int) string {
	return `SELECT j.cluster, j.job_key, j.job_id, j.profile, coalesce(j.work_dir, ''), coalesce(j.submit, 0),
		NOT (coalesce(j.elapsed_s, -1) = 0 AND j.start IS NULL)
		FROM jobs j
		WHERE j.profile <> '' AND j.stub = 0 AND j.state <> '' AND j.state NOT IN (` + placeholders(states) + `)
		  AND NOT EXISTS (SELECT 1 FROM submissions s WHERE s.cluster = j.cluster AND s.job_id IN (j.job_key, j.array_job))
		  AND NOT EXISTS (SELECT 1 FROM unscripted u WHERE u.cluster = j.cluster AND u.job_key = j.job_key)`
}

func (s *Store) unlinkedJobs(ctx context.Context, query string, args []any) ([]UnlinkedJob, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("unlinked jobs: %w", err)
	}
	defer rows.Close()
	var jobs []UnlinkedJob
	for rows.Next() {
		var j UnlinkedJob
		if err := rows.Scan(&j.Cluster, &j.Key, &j.JobID, &j.Profile, &j.WorkDir, &j.Submit, &j.Started); err != nil {
			return nil, fmt.Errorf("unlinked jobs: %w", err)
		}
		jobs = append(jobs, j)
	}
	return jobs, rows.Err()
}

// MarkUnscripted records jobs whose script slurmdbd does not have.
func (s *Store) MarkUnscripted(ctx context.Context, jobs []UnlinkedJob) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, j := range jobs {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO unscripted(cluster, job_key) VALUES (?, ?)`, j.Cluster, j.Key); err != nil {
			return fmt.Errorf("mark unscripted: %w", err)
		}
	}
	return tx.Commit()
}

// UnlinkedNamed lists the ids (sbatch's: an array once) of up to limit
// jobs, newest first, that carry one of the names and that no submission
// links to a script, with how many there are in all: the runs a user's
// dump brought in before anything tracked them. It reads the jobs of those
// names (jobs_by_name), and looks each up under every cluster name the
// submissions use (a handful), as a job linked under another cluster's
// name is linked.
func (s *Store) UnlinkedNamed(ctx context.Context, names []string, limit int) (ids []string, total int, err error) {
	if len(names) == 0 {
		return nil, 0, nil
	}
	args := make([]any, 0, len(names))
	for _, n := range names {
		args = append(args, n)
	}
	rows, err := s.db.QueryContext(ctx, `WITH RECURSIVE `+submissionClusters+`
		SELECT j.array_job, max(coalesce(j.submit, 0)) AS latest
		FROM jobs j
		WHERE j.name IN (`+placeholders(len(names))+`) AND j.stub = 0
		  AND NOT EXISTS (SELECT 1 FROM submissions s WHERE s.cluster IN (SELECT name FROM submission_clusters) AND s.job_id = j.array_job)
		GROUP BY j.array_job ORDER BY latest DESC`, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("unlinked jobs by name: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var latest int64
		if err := rows.Scan(&id, &latest); err != nil {
			return nil, 0, fmt.Errorf("unlinked jobs by name: %w", err)
		}
		if total++; len(ids) < limit {
			ids = append(ids, id)
		}
	}
	return ids, total, rows.Err()
}

// Fingerprints are the fingerprints of every script the history links jobs
// to, in order: what an index of the history walks, one script at a time.
func (s *Store) Fingerprints(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT fingerprint FROM submissions ORDER BY fingerprint`)
	if err != nil {
		return nil, fmt.Errorf("list the scripts: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var fp string
		if err := rows.Scan(&fp); err != nil {
			return nil, fmt.Errorf("list the scripts: %w", err)
		}
		out = append(out, fp)
	}
	return out, rows.Err()
}

// ScriptPath is where the script of a fingerprint was last seen ("" when
// the history has no such script): a file's path, or for a script known
// from the copy slurmdbd stored, sacct:CLUSTER/JOBID.
func (s *Store) ScriptPath(ctx context.Context, fingerprint string) (string, error) {
	var path string
	err := s.db.QueryRowContext(ctx, `SELECT path FROM scripts WHERE fingerprint = ?`, fingerprint).Scan(&path)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("the script %s: %w", fingerprint, err)
	}
	return path, nil
}

// The text of the scripts slurmdbd stored is kept beside the history, in
// a directory of its own (scriptTextsDir): a file per fingerprint, the
// directory 0700 and each file 0600 whoever's umask, as slurmdbd shows a
// user's script to root, Slurm's operators and the account's coordinators
// alone. Not in the history itself: a site-wide history is made
// world-readable for its users (the site file's site_db), and its
// published snapshot is; neither may hold a script.

// scriptTextsDir is where the scripts' text of the history at path is
// kept: site.db's in site.db.scripts.
func scriptTextsDir(path string) string { return path + ".scripts" }

// isFingerprint: a fingerprint is hexadecimal, and names a file as it is.
var isFingerprint = regexp.MustCompile(`^[0-9a-f]{8,128}$`).MatchString

// KeepScriptTexts keeps the text of scripts slurmdbd stored, by
// fingerprint, where none is kept yet: the report reads what a linked
// script runs from them (ScriptText). A history stored nowhere keeps none.
func (s *Store) KeepScriptTexts(texts map[string][]byte) error {
	if len(texts) == 0 || s.inMemory || s.path == "" {
		return nil
	}
	dir := scriptTextsDir(s.path)
	err := os.Mkdir(dir, 0o700)
	if errors.Is(err, fs.ErrExist) {
		// Made by another, or restored from a backup: its owner's
		// alone all the same, the names of the scripts too.
		err = os.Chmod(dir, 0o700)
	}
	if err != nil {
		return fmt.Errorf("keep the scripts' text: %w", err)
	}
	for fp, text := range texts {
		if !isFingerprint(fp) {
			continue
		}
		file := filepath.Join(dir, fp)
		if _, err := os.Lstat(file); err == nil {
			continue // the first copy kept: the same fingerprint is the same work
		}
		if err := atomicfile.Write(file, text, 0o600); err != nil {
			return fmt.Errorf("keep the scripts' text: %w", err)
		}
	}
	return nil
}

// ScriptText is the text of the script of fingerprint that slurmdbd stored,
// as KeepScriptTexts kept it; nil where none is kept, or where this user
// may not read it (the admins' alone), or beside a published snapshot.
func (s *Store) ScriptText(fingerprint string) []byte {
	if !isFingerprint(fingerprint) || s.path == "" {
		return nil
	}
	text, err := os.ReadFile(filepath.Join(scriptTextsDir(s.path), fingerprint))
	if err != nil {
		return nil
	}
	return text
}
