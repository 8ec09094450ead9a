package history

import (
	"cmp"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

// jobColumns are the accounting columns of a job, in the order jobValues gives them.
const jobColumns = `job_id, array_job, name, user, account, partition, qos, node_list, work_dir,
	state, cancelled_by, exit_code, exit_signal, submit, start, end, elapsed_s, timelimit_min,
	nodes, cpus, req_mem_mib, max_rss_mib, gpu_type, gpu_count, profile, gpu_mem_mib, gpu_util, stub, unsettled,
	jobstats_peak_mib, jobstats_total_mib, jobstats_util`

const numJobColumns = 32

// stubColumn is stub's place in jobColumns, from 1.
const stubColumn = 28

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
	// Progress, when set, is told how many jobs each batch committed.
	Progress func(jobs int)
}

// ImportStats counts what an import did.
type ImportStats struct {
	New, Updated, Unchanged int
	Stubs                   int // placeholder records that did not replace a full one
	Partial                 int // step records whose job line was not in the input
	// Jobstats counts the jobs with a jobstats summary read; BadJobstats
	// those whose summary could not be (imported all the same), the first
	// MaxBadJobstatsKept of them named in BadJobstatsJobs.
	Jobstats, BadJobstats int
	BadJobstatsJobs       []BadSummary
}

// BadSummary is a job whose jobstats summary could not be read, and why.
type BadSummary struct {
	JobID string
	Err   string
}

// MaxBadJobstatsKept bounds the unreadable summaries an import names.
const MaxBadJobstatsKept = 20

// Total is how many jobs the import read.
func (s ImportStats) Total() int { return s.New + s.Updated + s.Unchanged + s.Stubs + s.Partial }

// Add is the sum of two imports' counts.
func (s ImportStats) Add(o ImportStats) ImportStats {
	bad := append(slices.Clone(s.BadJobstatsJobs), o.BadJobstatsJobs...)
	return ImportStats{s.New + o.New, s.Updated + o.Updated, s.Unchanged + o.Unchanged, s.Stubs + o.Stubs, s.Partial + o.Partial,
		s.Jobstats + o.Jobstats, s.BadJobstats + o.BadJobstats, bad[:min(len(bad), MaxBadJobstatsKept)]}
}

// ImportJobs stores the jobs next yields until it returns io.EOF. Importing is
// idempotent (the same records twice change nothing) and a job seen again
// with a new state is updated in place. Each batch commits on its own, so an
// interrupted import keeps every batch before the interruption.
//
// Reading (next) runs in its own goroutine, a batch ahead of the writes, so
// parsing and SQLite overlap on two cores. Into a history with no jobs yet,
// the index of job names is built once at the end (withNameIndexDeferred).
func (s *Store) ImportJobs(ctx context.Context, next func() (*slurm.AcctJob, error), opt ImportOptions) (ImportStats, error) {
	var st ImportStats
	err := s.withNameIndexDeferred(ctx, func() (err error) {
		st, err = s.importJobs(ctx, next, opt)
		return err
	})
	return st, err
}

// importJobs is ImportJobs, the index of job names aside.
func (s *Store) importJobs(ctx context.Context, next func() (*slurm.AcctJob, error), opt ImportOptions) (ImportStats, error) {
	if opt.BatchSize <= 0 {
		opt.BatchSize = 5000
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	batches := make(chan []*slurm.AcctJob, 1)
	stop := make(chan struct{})
	var readErr error
	go func() {
		defer close(batches)
		for {
			batch := make([]*slurm.AcctJob, 0, opt.BatchSize)
			for len(batch) < opt.BatchSize {
				j, err := next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					readErr = err // an incomplete batch is not committed
					return
				}
				batch = append(batch, j)
			}
			if len(batch) == 0 {
				return
			}
			select {
			case batches <- batch:
			case <-stop:
				return
			}
			if len(batch) < opt.BatchSize {
				return
			}
		}
	}()
	defer func() {
		close(stop)
		for range batches { // let the reader finish
		}
	}()
	var total ImportStats
	for batch := range batches {
		st, err := s.importBatch(ctx, batch, opt)
		if err != nil {
			return total, err
		}
		total = total.Add(st)
		if opt.Progress != nil {
			opt.Progress(len(batch))
		}
	}
	return total, readErr
}

// importStmts are the import's statements, prepared on the raw SQLite
// connection: a whole-cluster import runs them millions of times, and
// database/sql's per-call conversions and locks would cost a third of it.
type importStmts struct {
	insert, update, usage driver.StmtExecContext
	closers               []driver.Stmt
	args                  []driver.NamedValue
}

func prepareImport(ctx context.Context, conn driver.ConnPrepareContext) (*importStmts, error) {
	st := &importStmts{args: make([]driver.NamedValue, 3+numJobColumns)}
	for i := range st.args {
		st.args[i].Ordinal = i + 1
	}
	prepare := func(query string) (driver.StmtExecContext, error) {
		stmt, err := conn.PrepareContext(ctx, query)
		if err != nil {
			return nil, err
		}
		st.closers = append(st.closers, stmt)
		exec, ok := stmt.(driver.StmtExecContext)
		if !ok {
			return nil, errors.New("the SQLite driver cannot execute with a context")
		}
		return exec, nil
	}
	var err error
	values := numbered(4, numJobColumns) // ?1 cluster, ?2 job_key, ?3 updated
	if st.insert, err = prepare(`INSERT INTO jobs(cluster, job_key, updated, ` + jobColumns + `)
		VALUES (?1, ?2, ?3, ` + values + `) ON CONFLICT (cluster, job_key) DO NOTHING`); err != nil {
		return st, err
	}
	// Update only when something differs, and never let a stub replace a full record.
	stub := fmt.Sprintf("?%d", 3+stubColumn)
	if st.update, err = prepare(`UPDATE jobs SET updated = ?3, (` + jobColumns + `) = (` + values + `)
		WHERE cluster = ?1 AND job_key = ?2 AND NOT (` + stub + ` = 1 AND stub = 0)
		AND (` + jobColumns + `) IS NOT (` + values + `)`); err != nil {
		return st, err
	}
	if st.usage, err = prepare(`UPDATE jobs SET updated = ?3,
		max_rss_mib = nullif(max(coalesce(max_rss_mib, -1), ?4), -1),
		gpu_mem_mib = nullif(max(coalesce(gpu_mem_mib, -1), ?5), -1),
		gpu_util = nullif(max(coalesce(gpu_util, -1), ?6), -1)
		WHERE cluster = ?1 AND job_key = ?2 AND (coalesce(max_rss_mib, -1) < ?4 OR coalesce(gpu_mem_mib, -1) < ?5 OR coalesce(gpu_util, -1) < ?6)`); err != nil {
		return st, err
	}
	return st, nil
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
	for _, s := range st.closers {
		s.Close()
	}
}

func (st *importStmts) exec(ctx context.Context, stmt driver.StmtExecContext, args []driver.NamedValue) (int64, error) {
	res, err := stmt.ExecContext(ctx, args)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (s *Store) importBatch(ctx context.Context, batch []*slurm.AcctJob, opt ImportOptions) (ImportStats, error) {
	var st ImportStats
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return st, fmt.Errorf("import: %w", err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		pc, ok1 := dc.(driver.ConnPrepareContext)
		bc, ok2 := dc.(driver.ConnBeginTx)
		if !ok1 || !ok2 {
			return errors.New("the SQLite driver lacks prepared statements or transactions")
		}
		tx, err := bc.BeginTx(ctx, driver.TxOptions{})
		if err != nil {
			return err
		}
		stmts, err := prepareImport(ctx, pc)
		defer stmts.close()
		if err != nil {
			tx.Rollback()
			return err
		}
		now := opt.Now().Unix()
		for _, j := range batch {
			if err := importJob(ctx, stmts, j, opt, now, &st); err != nil {
				tx.Rollback()
				return fmt.Errorf("job %s: %w", j.ID, err)
			}
		}
		return tx.Commit()
	})
	if err != nil {
		return ImportStats{}, fmt.Errorf("import: %w", err)
	}
	return st, nil
}

func importJob(ctx context.Context, stmts *importStmts, j *slurm.AcctJob, opt ImportOptions, now int64, st *ImportStats) error {
	cluster := j.Cluster
	if cluster == "" {
		cluster = opt.Cluster
	}
	args := stmts.args
	args[0].Value, args[1].Value, args[2].Value = cluster, j.Key, now
	if !j.HasJobLine {
		args[3].Value, args[4].Value, args[5].Value = j.MaxRSSMiB, j.GPUMemMiB, j.GPUUtil
		_, err := stmts.exec(ctx, stmts.usage, args[:6])
		st.Partial++
		return err
	}
	switch {
	case j.Jobstats != nil:
		st.Jobstats++
	case j.JobstatsErr != nil:
		if st.BadJobstats++; len(st.BadJobstatsJobs) < MaxBadJobstatsKept {
			st.BadJobstatsJobs = append(st.BadJobstatsJobs, BadSummary{j.ID, j.JobstatsErr.Error()})
		}
	}
	jobValues(args[3:], j, opt)
	n, err := stmts.exec(ctx, stmts.insert, args)
	if err != nil {
		return err
	}
	if n == 1 {
		st.New++
		return nil
	}
	if n, err = stmts.exec(ctx, stmts.update, args); err != nil {
		return err
	}
	switch {
	case n == 1:
		st.Updated++
	case j.Stub():
		st.Stubs++
	default:
		st.Unchanged++
	}
	return nil
}

// jobValues fills args with the job's columns, in jobColumns order.
func jobValues(args []driver.NamedValue, j *slurm.AcctJob, opt ImportOptions) {
	profile := ""
	if opt.Profile != nil && j.GPUCount > 0 {
		profile = opt.Profile(j.GPUType, j.GPUCount)
	}
	var limit driver.Value
	switch {
	case j.TimeLimit.Unlimited:
		limit = int64(0)
	case j.TimeLimit.Duration > 0:
		limit = int64(j.TimeLimit.Duration / time.Minute)
	}
	peak, total, util := jobstatsFigures(j)
	for i, v := range [numJobColumns]driver.Value{
		j.ID, j.ArrayJob, j.Name, j.User, j.Account, j.Partition, j.QOS, j.NodeList, j.WorkDir,
		j.State, j.CancelledBy, known(j.ExitCode), known(j.ExitSignal), unix(j.Submit), unix(j.Start), unix(j.End),
		knownSeconds(j.Elapsed), limit, known(j.Nodes), known(j.CPUs), knownF(j.ReqMemMiB), knownF(j.MaxRSSMiB),
		j.GPUType, int64(j.GPUCount), profile, knownF(j.GPUMemMiB), knownF(j.GPUUtil), j.Stub(), unsettled(j),
		peak, total, util,
	} {
		args[i].Value = v
	}
}

// jobstatsFigures are what the job's jobstats summary says of its GPUs:
// the largest memory in use, MiB, the total of the GPU that peaked (a
// slice's on MIG), and the mean utilization of the GPUs that report one
// (none on MIG); nil where it says nothing.
func jobstatsFigures(j *slurm.AcctJob) (peak, total, util driver.Value) {
	if j.Jobstats == nil || len(j.Jobstats.GPUs) == 0 {
		return nil, nil, nil
	}
	top := slices.MaxFunc(j.Jobstats.GPUs, func(a, b slurm.JobstatsGPU) int { return cmp.Compare(a.UsedMiB, b.UsedMiB) })
	peak, total = top.UsedMiB, top.TotalMiB
	var sum float64
	n := 0
	for _, g := range j.Jobstats.GPUs {
		if g.Utilization >= 0 {
			sum, n = sum+g.Utilization, n+1
		}
	}
	if n > 0 {
		util = sum / float64(n)
	}
	return peak, total, util
}

// unsettled reports whether a job's record may still change: it has not
// ended, or it is slurmdbd's placeholder. Computed here, not in SQL: an
// index condition on the state list would cost every insert a third more.
func unsettled(j *slurm.AcctJob) bool {
	return j.Stub() || slurm.ActiveState(j.State)
}

func known(n int) driver.Value {
	if n < 0 {
		return nil
	}
	return int64(n)
}

func knownF(f float64) driver.Value {
	if f < 0 {
		return nil
	}
	return f
}

func knownSeconds(d time.Duration) driver.Value {
	if d < 0 {
		return nil
	}
	return int64(d / time.Second)
}

func unix(t time.Time) driver.Value {
	if t.IsZero() {
		return nil
	}
	return t.Unix()
}
