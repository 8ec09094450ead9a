package history

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
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

// jobColumnList is jobColumns, a name each.
var jobColumnList = strings.Fields(strings.ReplaceAll(jobColumns, ",", " "))

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
	// Carries reports whether the records carry a sacct field (their
	// dump's header names it: slurm.SacctReader.HasField); nil, every
	// field. A job already held keeps what the records do not carry.
	Carries func(field string) bool
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

// Total is how many jobs the import read, each by its own record: the
// steps of a job whose record was not read (Partial) are not one, for it
// may not be in the history at all.
func (s ImportStats) Total() int { return s.New + s.Updated + s.Unchanged + s.Stubs }

// Add is the sum of two imports' counts.
func (s ImportStats) Add(o ImportStats) ImportStats {
	bad := append(slices.Clone(s.BadJobstatsJobs), o.BadJobstatsJobs...)
	return ImportStats{s.New + o.New, s.Updated + o.Updated, s.Unchanged + o.Unchanged, s.Stubs + o.Stubs, s.Partial + o.Partial,
		s.Jobstats + o.Jobstats, s.BadJobstats + o.BadJobstats, bad[:min(len(bad), MaxBadJobstatsKept)]}
}

// ImportJobs stores the jobs next yields until it returns io.EOF. Importing is
// idempotent (the same records twice change nothing) and a job seen again
// with a new state is updated in place, in the fields its records carry
// (opt.Carries): the others keep what the history holds. Each batch
// commits on its own, so an interrupted import keeps every batch before
// the interruption.
//
// Reading (next) runs in its own goroutine, a batch ahead of the writes, so
// parsing and SQLite overlap on two cores. Into a history with no jobs yet,
// the index of job names is built once at the end (withJobIndexesDeferred).
func (s *Store) ImportJobs(ctx context.Context, next func() (*slurm.AcctJob, error), opt ImportOptions) (ImportStats, error) {
	var st ImportStats
	err := s.withJobIndexesDeferred(ctx, func() (err error) {
		st, err = s.importJobs(ctx, next, opt)
		return err
	})
	if st.Total() >= largeImport {
		// What the import allocated is garbage now, yet its pages would
		// stay with the process under what comes next (a collect reads the
		// history: 9 MiB more at 1M jobs). Given back, the collect's peak
		// is the import's.
		debug.FreeOSMemory()
	}
	return st, err
}

// largeImport is an import of enough jobs that its memory is worth giving
// back to the system at its end (a forced collection: a few ms).
const largeImport = 100_000

// importJobs is ImportJobs, the index of job names aside. The reader
// goroutine turns each job into its row (rowBatch.add: the profile, the
// jobstats figures, every value as it is bound); the writer binds and
// steps a batch of rows in one call into SQLite (writeRows).
func (s *Store) importJobs(ctx context.Context, next func() (*slurm.AcctJob, error), opt ImportOptions) (ImportStats, error) {
	if opt.BatchSize <= 0 {
		opt.BatchSize = 5000
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	batches := make(chan *rowBatch, 1)
	// A batch's buffers go back to the reader once written: two or three
	// of them serve a whole import.
	free := make(chan *rowBatch, 3)
	stop := make(chan struct{})
	var readErr error
	go func() {
		defer close(batches)
		for {
			var b *rowBatch
			select {
			case b = <-free:
				b.reset()
			default:
				b = &rowBatch{}
			}
			for len(b.jobs) < opt.BatchSize {
				j, err := next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					readErr = err // an incomplete batch is not committed
					return
				}
				b.add(j, opt)
			}
			if len(b.jobs) == 0 {
				return
			}
			select {
			case batches <- b:
			case <-stop:
				return
			}
			if len(b.jobs) < opt.BatchSize {
				return
			}
		}
	}()
	defer func() {
		close(stop)
		for range batches { // let the reader finish
		}
	}()
	// One connection writes every batch, a second one checkpoints beside it.
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return ImportStats{}, fmt.Errorf("import: %w", err)
	}
	defer conn.Close()
	checkpoints, err := s.checkpointBeside(ctx, conn)
	if err != nil {
		return ImportStats{}, fmt.Errorf("import: %w", err)
	}
	defer checkpoints.stop()
	var total ImportStats
	for b := range batches {
		st, err := s.importBatch(ctx, conn, b, opt)
		if err != nil {
			return total, err
		}
		checkpoints.committed()
		total = total.Add(st)
		if opt.Progress != nil {
			opt.Progress(len(b.jobs))
		}
		select {
		case free <- b:
		default:
		}
	}
	return total, readErr
}

// importStmts are the import's statements, prepared on the raw SQLite
// connection; writeRows steps them.
type importStmts struct {
	insert, update, usage driver.Stmt
}

func prepareImport(ctx context.Context, conn driver.ConnPrepareContext, carries func(field string) bool) (*importStmts, error) {
	st := &importStmts{}
	var err error
	values := numbered(4, numJobColumns) // ?1 cluster, ?2 job_key, ?3 updated
	if st.insert, err = conn.PrepareContext(ctx, `INSERT INTO jobs(cluster, job_key, updated, `+jobColumns+`)
		VALUES (?1, ?2, ?3, `+values+`) ON CONFLICT (cluster, job_key) DO NOTHING`); err != nil {
		return st, err
	}
	if st.update, err = conn.PrepareContext(ctx, updateCarried(carries)); err != nil {
		return st, err
	}
	if st.usage, err = conn.PrepareContext(ctx, `UPDATE jobs SET updated = ?3,
		max_rss_mib = nullif(max(coalesce(max_rss_mib, -1), ?4), -1),
		gpu_mem_mib = nullif(max(coalesce(gpu_mem_mib, -1), ?5), -1),
		gpu_util = nullif(max(coalesce(gpu_util, -1), ?6), -1)
		WHERE cluster = ?1 AND job_key = ?2 AND (coalesce(max_rss_mib, -1) < ?4 OR coalesce(gpu_mem_mib, -1) < ?5 OR coalesce(gpu_util, -1) < ?6)`); err != nil {
		return st, err
	}
	return st, nil
}

// updateCarried is the UPDATE of a job held by a row bound as the insert's
// is: it sets only the columns the records carry, so that a dump without a
// field (a narrower sacct -o) keeps what the history holds of it instead of
// emptying it. It changes nothing where those columns are as held (the job
// counts unchanged), and never lets a stub replace a full record.
func updateCarried(carries func(field string) bool) string {
	var columns, values []string
	for i, c := range jobColumnList {
		if carries == nil || columnCarried(c, carries) {
			columns = append(columns, c)
			values = append(values, fmt.Sprintf("?%d", 4+i))
		}
	}
	where := "cluster = ?1 AND job_key = ?2"
	if carries == nil || columnCarried("stub", carries) {
		// A record that cannot tell a placeholder (no JobName or ReqTRES)
		// would take every job named "allocation" for one, and keep it
		// from ever being updated.
		where += fmt.Sprintf(" AND NOT (?%d = 1 AND stub = 0)", 3+stubColumn)
	}
	if len(columns) == 0 {
		return `UPDATE jobs SET updated = ?3 WHERE ` + where + ` AND 0`
	}
	cols, vals := strings.Join(columns, ", "), strings.Join(values, ", ")
	return `UPDATE jobs SET updated = ?3, (` + cols + `) = (` + vals + `)
		WHERE ` + where + ` AND (` + cols + `) IS NOT (` + vals + `)`
}

// columnCarried reports whether records with the sacct fields carries says
// the job column's value, as slurm.SacctReader reads it from them.
func columnCarried(column string, carries func(field string) bool) bool {
	anyOf := func(fields ...string) bool { return slices.ContainsFunc(fields, carries) }
	switch column {
	case "job_id", "array_job":
		return carries("JobID") // without it, the id is JobIDRaw's
	case "name":
		return carries("JobName")
	case "user":
		return carries("User")
	case "account":
		return carries("Account")
	case "partition":
		return carries("Partition")
	case "qos":
		return carries("QOS")
	case "node_list":
		return carries("NodeList")
	case "work_dir":
		return carries("WorkDir")
	case "submit":
		return carries("Submit")
	case "start":
		return carries("Start")
	case "end":
		return carries("End")
	case "state", "cancelled_by", "unsettled":
		return carries("State")
	case "exit_code", "exit_signal":
		return carries("ExitCode")
	case "elapsed_s":
		return anyOf("ElapsedRaw", "Elapsed") || carries("Start") && carries("End")
	case "timelimit_min":
		return anyOf("TimelimitRaw", "Timelimit")
	case "nodes":
		return anyOf("NNodes", "AllocTRES", "ReqTRES")
	case "cpus":
		return anyOf("AllocCPUS", "NCPUS", "AllocTRES", "ReqTRES")
	case "req_mem_mib":
		return anyOf("ReqMem", "AllocTRES", "ReqTRES")
	case "max_rss_mib":
		return carries("MaxRSS")
	case "gpu_type", "gpu_count", "profile":
		return anyOf("AllocTRES", "ReqTRES")
	case "gpu_mem_mib", "gpu_util":
		return carries("TRESUsageInMax")
	case "stub":
		return carries("JobName") && carries("ReqTRES") // slurm.AcctJob.Stub reads both
	case "jobstats_peak_mib", "jobstats_total_mib", "jobstats_util":
		return carries("AdminComment")
	}
	panic("history: no sacct field said for job column " + column)
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
	for _, s := range []driver.Stmt{st.insert, st.update, st.usage} {
		if s != nil {
			s.Close()
		}
	}
}

// importBatch writes a batch of rows on conn, in a transaction of its own.
func (s *Store) importBatch(ctx context.Context, conn *sql.Conn, b *rowBatch, opt ImportOptions) (ImportStats, error) {
	st := b.stats
	err := conn.Raw(func(dc any) error {
		bc, ok := dc.(driver.ConnBeginTx)
		if !ok {
			return errors.New("the SQLite driver lacks transactions")
		}
		tx, err := bc.BeginTx(ctx, driver.TxOptions{})
		if err != nil {
			return err
		}
		outcomes, err := writeBatch(ctx, dc, b, opt)
		if err != nil {
			tx.Rollback()
			return err
		}
		for i, o := range outcomes {
			st.count(o, b.jobs[i].stub)
		}
		return tx.Commit()
	})
	if err != nil {
		return ImportStats{}, fmt.Errorf("import: %w", err)
	}
	return st, nil
}

// writeBatch writes b's rows, stamped opt.Now, in the transaction open on
// the raw connection dc, and returns each row's outcome.
func writeBatch(ctx context.Context, dc any, b *rowBatch, opt ImportOptions) ([]rowOutcome, error) {
	pc, ok1 := dc.(driver.ConnPrepareContext)
	qc, ok2 := dc.(driver.QueryerContext)
	if !ok1 || !ok2 {
		return nil, errors.New("the SQLite driver lacks prepared statements or queries")
	}
	stmts, err := prepareImport(ctx, pc, opt.Carries)
	defer stmts.close()
	if err != nil {
		return nil, err
	}
	// With the outbox off its triggers note nothing, yet cost a job's row
	// a sixth of its time: the batch's statements run without them. The
	// transaction's lock keeps the outbox off meanwhile.
	off, err := outboxOff(ctx, qc)
	if err != nil {
		return nil, err
	}
	if off {
		restore, err := withoutTriggers(stmts.insert)
		if err != nil {
			return nil, err
		}
		defer restore()
	}
	outcomes, failed, err := writeRows(stmts, b.rows, len(b.jobs), opt.Now().Unix())
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", b.jobs[failed].id, err)
	}
	return outcomes, nil
}

// outboxOff reports whether the outbox is off (KeepOutbox): no store is
// sent this history's changes.
func outboxOff(ctx context.Context, qc driver.QueryerContext) (bool, error) {
	rows, err := qc.QueryContext(ctx, `SELECT NOT EXISTS (SELECT 1 FROM outbox_on)`, nil)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	v := make([]driver.Value, 1)
	if err := rows.Next(v); err != nil {
		return false, err
	}
	off, ok := v[0].(int64)
	return ok && off == 1, nil
}

// knownF is f, or NULL where it is negative (slurm.Unknown).
func knownF(f float64) driver.Value {
	if f < 0 {
		return nil
	}
	return f
}
