package history

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
)

// A Reader reads a history in passes that see it as it stood at the first
// read, whatever a collect writes meanwhile: a year of a large site's jobs
// read once for what tells them apart (Jobs), then again, whole, a set of
// them at a time (Records), so that they never sit in memory all at once.
// It holds a read transaction on a connection of its own until Close; the
// history's other reads go on beside it.
type Reader struct {
	s    *Store
	q    querier
	conn *sql.Conn // nil for a history in memory, which nothing else writes

	emulated *bool // whether the history holds emulated runs, once asked
}

// Reader starts a Reader; Close ends it.
func (s *Store) Reader(ctx context.Context) (*Reader, error) {
	if s.inMemory {
		return &Reader{s: s, q: s.db}, nil // its one connection: no transaction to hold it
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	// A deferred transaction: its snapshot is taken at the first read,
	// and it takes no lock a writer waits on (WAL).
	if _, err := conn.ExecContext(ctx, `BEGIN`); err != nil {
		conn.Close()
		return nil, fmt.Errorf("read history: %w", err)
	}
	return &Reader{s: s, q: conn, conn: conn}, nil
}

// Close ends the reader's transaction and gives its connection back.
func (r *Reader) Close() error {
	if r.conn == nil {
		return nil
	}
	if _, err := r.conn.ExecContext(context.Background(), `ROLLBACK`); err != nil {
		// Never give the pool a connection still in the transaction.
		r.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	return r.conn.Close()
}

// jobKeyColumns are the columns Jobs reads: a job's row, what identifies the
// job, what it ran and asked for (its price), whose and which script's it
// is, and whether its output was scanned.
const jobKeyColumns = `j.rowid, j.cluster, j.job_key, j.job_id, j.name, j.user, j.partition, j.qos, j.state,
	j.submit, j.end, j.elapsed_s, j.cpus, j.req_mem_mib, j.gpu_type, j.gpu_count, j.profile, j.stub,
	s.fingerprint, s.script, s.profile, s.sweep_dir, s.workload, s.stdout, o.path`

// Jobs reads the jobs f selects as History lists them, newest first and
// each job once (the same record History keeps of a job filed under two
// cluster names), with these fields only: Cluster, Key, JobID, Name, User,
// Partition, QOS, State, Submit, End, ElapsedS, CPUs, ReqMemMiB, GPUType,
// GPUCount, Profile, Stub, the submission's (Fingerprint, Script,
// RequestedProfile, SweepDir, Workload, Stdout) and OutputPath; no
// emulated runs. fn hears each with the rows of the jobs
// table it was read from (a job's one row, or its rows under each cluster
// name), for Records; the record and the rows are fn's during the call
// only. A filter of a script, a workload, earlier versions or a limit is
// not read this way.
func (r *Reader) Jobs(ctx context.Context, f HistoryFilter, fn func(rec *JobRecord, rows []int64) error) error {
	if f.Fingerprint != "" || f.Workload != "" || f.Versions != nil || f.Limit > 0 {
		return errors.New("read history: a script's, a workload's or the newest jobs are read by History, not Reader.Jobs")
	}
	q, args := r.s.selectJobs(ctx, jobKeyColumns, f)
	rows, err := r.q.QueryContext(ctx, q+newestFirst, args...)
	if err != nil {
		return fmt.Errorf("read history: %w", err)
	}
	defer rows.Close()
	// The rows of one job come together in newestFirst's order: those of
	// a submit time, where its identity lies, make one block, whose jobs
	// are kept once each as onceEach keeps them.
	var block []scannedJob
	var at int64
	var ids []int64
	flush := func() error {
		for _, sj := range onceEachScanned(block) {
			ids = append(append(ids[:0], sj.id), sj.more...)
			if err := fn(&sj.rec, ids); err != nil {
				return err
			}
		}
		block = block[:0]
		return nil
	}
	for rows.Next() {
		sj, err := scanJob(rows)
		if err != nil {
			return fmt.Errorf("read history: %w", err)
		}
		if submit := unixOrZero(sj.rec.Submit); len(block) == 0 || submit != at {
			if err := flush(); err != nil {
				return err
			}
			at = submit
		}
		block = append(block, sj)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read history: %w", err)
	}
	return flush()
}

// scannedJob is a row Jobs read: the record, its row, and the rows of the
// same job under other cluster names.
type scannedJob struct {
	rec  JobRecord
	id   int64
	more []int64
}

// onceEachScanned is onceEach for the rows of one block, each kept job
// with the rows of the ones it stands for.
func onceEachScanned(block []scannedJob) []scannedJob {
	if len(block) < 2 {
		return block
	}
	at := map[jobIdentity]int{}
	out := block[:0]
	for _, sj := range block {
		id := identityOf(&sj.rec)
		if i, dup := at[id]; dup {
			out[i].rec = preferred(out[i].rec, sj.rec)
			out[i].more = append(out[i].more, sj.id)
			continue
		}
		at[id] = len(out)
		out = append(out, sj)
	}
	return out
}

func scanJob(rows *sql.Rows) (scannedJob, error) {
	var sj scannedJob
	r := &sj.rec
	var name, user, partition, qos, fp, script, reqProfile, sweepDir, workload, stdout, path sql.NullString
	var submit, end sql.NullInt64
	err := rows.Scan(&sj.id, &r.Cluster, &r.Key, &r.JobID, &name, &user, &partition, &qos, &r.State,
		&submit, &end, &r.ElapsedS, &r.CPUs, &r.ReqMemMiB, &r.GPUType, &r.GPUCount, &r.Profile, &r.Stub,
		&fp, &script, &reqProfile, &sweepDir, &workload, &stdout, &path)
	if err != nil {
		return sj, err
	}
	r.Name, r.User, r.Partition, r.QOS = name.String, user.String, partition.String, qos.String
	r.Submit, r.End = timePtr(submit), timePtr(end)
	r.Fingerprint, r.Script, r.RequestedProfile = fp.String, script.String, reqProfile.String
	r.SweepDir, r.Workload, r.Stdout, r.OutputPath = sweepDir.String, workload.String, stdout.String, path.String
	return sj, nil
}

// Records reads again, whole, the jobs of the rows Jobs gave, for each set
// of rows (a caller's group of jobs, each row in one set): its records,
// each job once, in the order of its rows, with their emulated runs.
func (r *Reader) Records(ctx context.Context, sets [][]int64) ([][]JobRecord, error) {
	type slot struct{ set, i int }
	n := 0
	for _, rows := range sets {
		n += len(rows)
	}
	at := make(map[int64]slot, n)
	list := make([]byte, 0, 12*n+2)
	list = append(list, '[')
	out := make([][]JobRecord, len(sets))
	read := make([][]bool, len(sets))
	for k, rows := range sets {
		out[k], read[k] = make([]JobRecord, len(rows)), make([]bool, len(rows))
		for i, id := range rows {
			at[id] = slot{k, i}
			if len(list) > 1 {
				list = append(list, ',')
			}
			list = strconv.AppendInt(list, id, 10)
		}
	}
	list = append(list, ']')
	// The rows in the table's order (the list's as a look-up), then put in
	// the sets' own.
	rows, err := r.q.QueryContext(ctx, `SELECT `+r.s.readColumns()+`, j.rowid FROM jobs j
		LEFT JOIN submissions s ON s.cluster = j.cluster AND s.job_id = j.array_job
		LEFT JOIN outputs o ON o.cluster = j.cluster AND o.job_key = j.job_key
		WHERE j.rowid IN (SELECT value FROM json_each(?))`, string(list))
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		rec, err := scanRecord(rows, &id)
		if err != nil {
			return nil, fmt.Errorf("read history: %w", err)
		}
		if s, ok := at[id]; ok {
			out[s.set][s.i], read[s.set][s.i] = rec, true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	rows.Close()
	emulated, err := r.hasEmulated(ctx)
	if err != nil {
		return nil, err
	}
	for k := range out {
		recs := out[k][:0]
		for i, ok := range read[k] {
			if ok { // in a Reader's snapshot, every row Jobs read
				recs = append(recs, out[k][i])
			}
		}
		out[k] = onceEach(recs)
		if emulated {
			if err := r.s.fillEmulatedFrom(ctx, r.q, out[k]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// hasEmulated reports whether the history holds any emulated run: most
// hold none, and their records need no look-up.
func (r *Reader) hasEmulated(ctx context.Context) (bool, error) {
	if r.emulated == nil {
		has := false
		if r.s.schema >= schemaEmulated {
			var one int
			err := r.q.QueryRowContext(ctx, `SELECT 1 FROM emulated_runs LIMIT 1`).Scan(&one)
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return false, fmt.Errorf("read emulated runs: %w", err)
			default:
				has = true
			}
		}
		r.emulated = &has
	}
	return *r.emulated, nil
}
