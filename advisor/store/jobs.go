package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

// jobColumns are the accounting columns of a job, in the order jobValues gives them.
const jobColumns = `job_id, array_job, name, user, account, partition, qos, node_list, work_dir,
	state, cancelled_by, exit_code, exit_signal, submit, start, end, elapsed_s, timelimit_min,
	nodes, cpus, req_mem_mib, max_rss_mib, gpu_type, gpu_count, profile, gpu_mem_mib, gpu_util, stub`

const numJobColumns = 28

// ImportOptions say how accounting records become history.
type ImportOptions struct {
	// Cluster names jobs whose records carry no Cluster field.
	Cluster string
	// Profile maps a job's typed GPU (a100_10g, count) to the site's profile name; "" if none.
	Profile func(gpuType string, count int) string
	// BatchSize is how many jobs each transaction commits (default 5000).
	BatchSize int
	// Now stamps the rows (default time.Now).
	Now func() time.Time
}

// ImportStats counts what an import did.
type ImportStats struct {
	New, Updated, Unchanged int
	Stubs                   int // placeholder records that did not replace a full one
	Partial                 int // step records whose job line was not in the input
}

// Total is how many jobs the import read.
func (s ImportStats) Total() int { return s.New + s.Updated + s.Unchanged + s.Stubs + s.Partial }

func (s ImportStats) add(o ImportStats) ImportStats {
	return ImportStats{s.New + o.New, s.Updated + o.Updated, s.Unchanged + o.Unchanged, s.Stubs + o.Stubs, s.Partial + o.Partial}
}

// ImportJobs stores the jobs next yields until it returns io.EOF. Importing is
// idempotent (the same records twice change nothing) and a job seen again
// with a new state is updated in place. Each batch commits on its own, so an
// interrupted import keeps every batch before the interruption.
func (s *Store) ImportJobs(ctx context.Context, next func() (*slurm.AcctJob, error), opt ImportOptions) (ImportStats, error) {
	if opt.BatchSize <= 0 {
		opt.BatchSize = 5000
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	var total ImportStats
	for {
		st, done, err := s.importBatch(ctx, next, opt)
		total = total.add(st)
		if err != nil || done {
			return total, err
		}
	}
}

type importStmts struct {
	insert, update, usage *sql.Stmt
}

func prepareImport(ctx context.Context, tx *sql.Tx) (*importStmts, error) {
	var st importStmts
	var err error
	values := numbered(4, numJobColumns) // ?1 cluster, ?2 job_key, ?3 updated
	if st.insert, err = tx.PrepareContext(ctx, `INSERT INTO jobs(cluster, job_key, updated, `+jobColumns+`)
		VALUES (?1, ?2, ?3, `+values+`) ON CONFLICT (cluster, job_key) DO NOTHING`); err != nil {
		return nil, err
	}
	// Update only when something differs, and never let a stub replace a full record.
	stub := fmt.Sprintf("?%d", 3+numJobColumns)
	if st.update, err = tx.PrepareContext(ctx, `UPDATE jobs SET updated = ?3, (`+jobColumns+`) = (`+values+`)
		WHERE cluster = ?1 AND job_key = ?2 AND NOT (`+stub+` = 1 AND stub = 0)
		AND (`+jobColumns+`) IS NOT (`+values+`)`); err != nil {
		return nil, err
	}
	if st.usage, err = tx.PrepareContext(ctx, `UPDATE jobs SET updated = ?3,
		max_rss_mib = nullif(max(coalesce(max_rss_mib, -1), ?4), -1),
		gpu_mem_mib = nullif(max(coalesce(gpu_mem_mib, -1), ?5), -1),
		gpu_util = nullif(max(coalesce(gpu_util, -1), ?6), -1)
		WHERE cluster = ?1 AND job_key = ?2 AND (coalesce(max_rss_mib, -1) < ?4 OR coalesce(gpu_mem_mib, -1) < ?5 OR coalesce(gpu_util, -1) < ?6)`); err != nil {
		return nil, err
	}
	return &st, nil
}

// numbered is "?from, ?from+1, ..." for n parameters.
func numbered(from, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "?%d", from+i)
	}
	return b.String()
}

func (st *importStmts) close() {
	for _, s := range []*sql.Stmt{st.insert, st.update, st.usage} {
		if s != nil {
			s.Close()
		}
	}
}

func (s *Store) importBatch(ctx context.Context, next func() (*slurm.AcctJob, error), opt ImportOptions) (ImportStats, bool, error) {
	var st ImportStats
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return st, false, fmt.Errorf("import: %w", err)
	}
	defer tx.Rollback()
	stmts, err := prepareImport(ctx, tx)
	if err != nil {
		return st, false, fmt.Errorf("import: %w", err)
	}
	defer stmts.close()
	now := opt.Now().Unix()
	done := false
	for n := 0; n < opt.BatchSize; n++ {
		j, err := next()
		if errors.Is(err, io.EOF) {
			done = true
			break
		}
		if err != nil {
			return ImportStats{}, false, err
		}
		if err := importJob(ctx, stmts, j, opt, now, &st); err != nil {
			return ImportStats{}, false, fmt.Errorf("import job %s: %w", j.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return ImportStats{}, false, fmt.Errorf("import: %w", err)
	}
	return st, done, nil
}

func importJob(ctx context.Context, stmts *importStmts, j *slurm.AcctJob, opt ImportOptions, now int64, st *ImportStats) error {
	cluster := j.Cluster
	if cluster == "" {
		cluster = opt.Cluster
	}
	if !j.HasJobLine {
		_, err := stmts.usage.ExecContext(ctx, cluster, j.Key, now, j.MaxRSSMiB, j.GPUMemMiB, j.GPUUtil)
		st.Partial++
		return err
	}
	args := append([]any{cluster, j.Key, now}, jobValues(j, opt)...)
	res, err := stmts.insert.ExecContext(ctx, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		st.New++
		return nil
	}
	res, err = stmts.update.ExecContext(ctx, args...)
	if err != nil {
		return err
	}
	switch n, _ := res.RowsAffected(); {
	case n == 1:
		st.Updated++
	case j.Stub():
		st.Stubs++
	default:
		st.Unchanged++
	}
	return nil
}

func jobValues(j *slurm.AcctJob, opt ImportOptions) []any {
	profile := ""
	if opt.Profile != nil && j.GPUCount > 0 {
		profile = opt.Profile(j.GPUType, j.GPUCount)
	}
	var limit any
	switch {
	case j.TimeLimit.Unlimited:
		limit = 0
	case j.TimeLimit.Duration > 0:
		limit = int64(j.TimeLimit.Duration / time.Minute)
	}
	return []any{
		j.ID, j.ArrayJob, j.Name, j.User, j.Account, j.Partition, j.QOS, j.NodeList, j.WorkDir,
		j.State, j.CancelledBy, known(j.ExitCode), known(j.ExitSignal), unix(j.Submit), unix(j.Start), unix(j.End),
		knownSeconds(j.Elapsed), limit, known(j.Nodes), known(j.CPUs), knownF(j.ReqMemMiB), knownF(j.MaxRSSMiB),
		j.GPUType, j.GPUCount, profile, knownF(j.GPUMemMiB), knownF(j.GPUUtil), j.Stub(),
	}
}

func known(n int) any {
	if n < 0 {
		return nil
	}
	return n
}

func knownF(f float64) any {
	if f < 0 {
		return nil
	}
	return f
}

func knownSeconds(d time.Duration) any {
	if d < 0 {
		return nil
	}
	return int64(d / time.Second)
}

func unix(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.Unix()
}
