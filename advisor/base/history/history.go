package history

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// HistoryFilter selects job records.
type HistoryFilter struct {
	Fingerprint string    // jobs linked to this script; "" for every job
	Versions    *Versions // with Fingerprint: also the jobs of the script's earlier versions
	Workload    string    // jobs tagged with this workload
	Tracked     bool      // only jobs linked to a script
	Keys        [][2]string
	// Ended selects the jobs that ended in [From, Before), EndedOutside
	// those that ended before From or from Before on; zero ends are open.
	// GPU: only jobs with a GPU (of a profile the site knows or not).
	// Named: only the jobs of these users of these job names; User: only
	// this user's jobs ("": anyone's).
	Ended, EndedOutside Period
	GPU                 bool
	Named               []UserJobName
	User                string
	Limit               int // newest first, at most this many; 0 for all
}

// UserJobName is one user's jobs of one name.
type UserJobName struct{ User, Name string }

// Period is a span of time, [From, Before); a zero end is open.
type Period struct{ From, Before time.Time }

// IsZero reports whether the period selects every time.
func (p Period) IsZero() bool { return p.From.IsZero() && p.Before.IsZero() }

// Versions says how to find the jobs of a script's earlier versions (the
// script edited: another fingerprint): those linked to a fingerprint last
// seen at the script's path, and those of its job name that asked for the
// same CPUs and memory.
type Versions struct {
	Path     string   // the script's absolute path; "": none
	JobNames []string // the names its jobs take (sbatch's, a sweep's variants'); none: no match by name
	CPUs     int64    // the CPUs it asks for; 0: any
	MemMiB   float64  // the memory it asks for; 0: any
	User     string   // jobs of this user only match by name; "": anyone's
	// Only: the earlier versions' jobs alone, for a caller that has read
	// the script's own already.
	Only bool
}

// How a job of an earlier version of a script was found (JobRecord.EarlierBy).
const (
	EarlierByPath = "path" // linked to a script last seen at the same path
	EarlierByName = "name" // the same job name, CPUs and memory
)

// recordColumns are a job record's columns, as scanRecord reads them, from
// jobs j, a submission s and outputs o (Store.readColumns: as the schema
// read has them).
const recordColumns = `j.cluster, j.job_key, j.job_id, j.array_job, j.name, j.user, j.account, j.partition, j.qos,
	j.node_list, j.work_dir, j.state, j.cancelled_by, j.exit_code, j.exit_signal, j.submit, j.start, j.end,
	j.elapsed_s, j.timelimit_min, j.nodes, j.cpus, j.req_mem_mib, j.max_rss_mib, j.gpu_type, j.gpu_count,
	j.profile, j.gpu_mem_mib, j.gpu_util, j.stub, j.jobstats_peak_mib, j.jobstats_total_mib, j.jobstats_util,
	s.fingerprint, s.script, s.profile, s.sweep_dir, s.workload, s.stdout,
	o.path, o.truncated, o.gpu_oom, o.gpu_oom_text, o.gpu_need_mib, o.host_oom, o.host_oom_text, o.time_limit,
	o.cancelled, o.work, o.work_unit, o.work_source, o.metrics, o.gpu_peak_mib, o.gpu_total_mib, o.gpu_device,
	o.gpu_used_peak_mib, o.gpu_profile, o.gpu_util, o.gpu_util_mean, o.gpu_util_max, o.gpu_samples, o.gpu_source,
	o.versions, o.gpu_mem_util_mean, o.gpu_mem_util_max, o.error_file, o.error_line, o.error_text, o.settings,
	o.resembles`

// readColumns are recordColumns as the schema read has them: a read-only
// history of a schema before schemaMemUtil has no memory utilization, one
// before schemaJobstats no jobstats figures, read as unknown.
func (s *Store) readColumns() string {
	cols := recordColumns
	if s.schema < schemaJobstats {
		cols = strings.Replace(cols, "j.jobstats_peak_mib, j.jobstats_total_mib, j.jobstats_util", "NULL, NULL, NULL", 1)
	}
	if s.schema < schemaMemUtil {
		cols = strings.Replace(cols, "o.gpu_mem_util_mean, o.gpu_mem_util_max", "NULL, NULL", 1)
	}
	if s.schema < schemaErrorLine {
		cols = strings.Replace(cols, "o.error_file, o.error_line, o.error_text, o.settings", "NULL, NULL, NULL, NULL", 1)
	}
	if s.schema < schemaResembles {
		cols = strings.Replace(cols, "o.resembles", "NULL", 1)
	}
	return cols
}

// newestFirst orders job records as History lists them: by submission,
// jobs with none (a NULL, which SQLite sorts below every time) last; then
// by job number, highest first, then by key and cluster, in one term
// (newestTie). Two terms, the first jobs_by_submit's column: a query with
// a limit walks that index and sorts only the jobs of one second, where
// SQLite sorts every job for three terms or more (a second of a million).
const newestFirst = ` ORDER BY j.submit DESC, ` + newestTie

// newestTie orders jobs submitted in the same second as the terms
// CAST(job_key AS INTEGER) DESC, job_key, cluster would: the number as a
// fixed-width count down, then the key and the cluster, apart by a byte
// below any a key holds (an array's task "12_1" before "12_10").
const newestTie = `printf('%020d%s%s%s', 9000000000000000000 - CAST(j.job_key AS INTEGER), j.job_key, char(1), j.cluster)`

// History lists job records, newest submission first, each with its
// emulated runs. With Versions, the jobs of the script's earlier versions
// follow the script's own in that order, marked Earlier, each job once.
func (s *Store) History(ctx context.Context, f HistoryFilter) ([]JobRecord, error) {
	recs, err := s.jobRecords(ctx, f)
	if err != nil {
		return nil, err
	}
	if err := s.fillEmulated(ctx, recs); err != nil {
		return nil, err
	}
	return recs, nil
}

// jobRecords are History's records, without their emulated runs.
func (s *Store) jobRecords(ctx context.Context, f HistoryFilter) ([]JobRecord, error) {
	var recs []JobRecord
	if f.Versions == nil || !f.Versions.Only || f.Fingerprint == "" {
		var err error
		if recs, err = s.history(ctx, f); err != nil || f.Versions == nil || f.Fingerprint == "" {
			return recs, err
		}
	}
	seen := map[jobIdentity]bool{}
	for i := range recs {
		seen[identityOf(&recs[i])] = true
	}
	for _, by := range []string{EarlierByPath, EarlierByName} {
		more, err := s.earlier(ctx, f, by)
		if err != nil {
			return nil, err
		}
		for _, r := range more {
			if k := identityOf(&r); !seen[k] {
				seen[k] = true
				r.Earlier, r.EarlierBy = true, by
				recs = append(recs, r)
			}
		}
	}
	slices.SortStableFunc(recs, NewestFirst)
	if f.Limit > 0 && len(recs) > f.Limit {
		recs = recs[:f.Limit]
	}
	return recs, nil
}

// jobIdentity is what makes a job the same whatever cluster name files
// it: its JobIDRaw and submit time; where the time is unknown, its name too.
type jobIdentity struct {
	key, cluster string
	submit       int64
}

func identityOf(r *JobRecord) jobIdentity {
	if r.Submit == nil {
		return jobIdentity{key: r.Key, cluster: r.Cluster}
	}
	return jobIdentity{key: r.Key, submit: r.Submit.Unix()}
}

// onceEach keeps one record of each job (the same job filed under two
// cluster names, or linked by two submissions), in order: the one with its
// output's evidence, else linked to a script, else complete, with the link
// of the other where it has none.
func onceEach(recs []JobRecord) []JobRecord {
	at := map[jobIdentity]int{}
	out := recs[:0]
	for _, r := range recs {
		id := identityOf(&r)
		i, dup := at[id]
		if !dup {
			at[id] = len(out)
			out = append(out, r)
			continue
		}
		out[i] = preferred(out[i], r)
	}
	return out
}

// preferred is the better of two records of one job, with the other's
// link to a script where it has none.
func preferred(a, b JobRecord) JobRecord {
	weight := func(r *JobRecord) int {
		w := 0
		if r.OutputPath != "" {
			w += 4
		}
		if r.Fingerprint != "" {
			w += 2
		}
		if !r.Stub {
			w++
		}
		return w
	}
	keep, other := a, b
	if weight(&b) > weight(&a) {
		keep, other = b, a
	}
	if keep.Fingerprint == "" && other.Fingerprint != "" {
		keep.Fingerprint, keep.Script, keep.RequestedProfile = other.Fingerprint, other.Script, other.RequestedProfile
		keep.SweepDir, keep.Workload, keep.Stdout = other.SweepDir, other.Workload, other.Stdout
	}
	return keep
}

// NewestFirst orders job records as History lists them: by submission
// time, newest first, then by job id.
func NewestFirst(a, b JobRecord) int {
	return cmp.Or(cmp.Compare(unixOrZero(b.Submit), unixOrZero(a.Submit)), cmp.Compare(keyNumber(b.Key), keyNumber(a.Key)))
}

func unixOrZero(t *time.Time) int64 {
	if t == nil {
		return 0
	}
	return t.Unix()
}

// keyNumber is a JobIDRaw as a number, as SQLite's CAST reads it.
func keyNumber(key string) int64 {
	end := 0
	for end < len(key) && key[end] >= '0' && key[end] <= '9' {
		end++
	}
	n, _ := strconv.ParseInt(key[:end], 10, 64)
	return n
}

// history lists the records of the script (or workload, or all), newest first.
func (s *Store) history(ctx context.Context, f HistoryFilter) ([]JobRecord, error) {
	q, args := s.selectJobs(ctx, s.readColumns(), f)
	return s.recordsOnce(ctx, q+newestFirst, f.Limit, args)
}

// selectJobs is the statement that reads the columns cols (of jobs j,
// submissions s and outputs o) of the jobs f selects, in no order, with
// its arguments; f's Versions and Limit are the caller's.
func (s *Store) selectJobs(ctx context.Context, cols string, f HistoryFilter) (string, []any) {
	var where []string
	var args []any
	if f.Fingerprint != "" {
		where = append(where, `s.fingerprint = ?`)
		args = append(args, f.Fingerprint)
	}
	if f.Workload != "" {
		where = append(where, `s.workload = ?`)
		args = append(args, f.Workload)
	}
	// From a script's submissions to their jobs, through indexes: a whole
	// cluster's history must not be scanned for one script, nor for the
	// jobs linked to any (Tracked): those are the submissions' jobs, which
	// walking every job of a site's history to look each one up among the
	// submissions found in 0.4 s of a collect's 7 at a million jobs.
	q := `SELECT ` + cols + ` FROM jobs j LEFT JOIN submissions s ON s.cluster = j.cluster AND s.job_id = j.array_job`
	switch {
	case len(where) > 0:
		with, from := s.linked(ctx, strings.Join(where, " AND "))
		q = with + `SELECT ` + cols + ` FROM ` + from + submissionsToJobs
	case f.Tracked:
		// Each submission's jobs under its own cluster name, as the join
		// above pairs them: with the fallback names too, a job filed under
		// two would come with either's submission, whichever came first.
		q = `SELECT ` + cols + ` FROM ` + ownClusterSubmissions("1") + submissionsToJobs
	}
	q += ` LEFT JOIN outputs o ON o.cluster = j.cluster AND o.job_key = j.job_key WHERE 1`
	if f.GPU {
		q += ` AND j.gpu_count > 0`
	}
	if out := f.EndedOutside; !out.IsZero() {
		var either []string
		if !out.From.IsZero() {
			either = append(either, `j.end < ?`)
			args = append(args, out.From.Unix())
		}
		if !out.Before.IsZero() {
			either = append(either, `j.end >= ?`)
			args = append(args, out.Before.Unix())
		}
		q += ` AND (` + strings.Join(either, " OR ") + `)`
	}
	if len(f.Named) > 0 {
		q += ` AND (j.user, j.name) IN (VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?), ", len(f.Named)), ", ") + `)`
		for _, n := range f.Named {
			args = append(args, n.User, n.Name)
		}
	}
	if f.User != "" {
		q += ` AND j.user = ?`
		args = append(args, f.User)
	}
	if !f.Ended.From.IsZero() {
		q += ` AND j.end >= ?`
		args = append(args, f.Ended.From.Unix())
	}
	if !f.Ended.Before.IsZero() {
		q += ` AND j.end < ?`
		args = append(args, f.Ended.Before.Unix())
	}
	if len(f.Keys) > 0 {
		var cond []string
		for _, k := range f.Keys {
			cond = append(cond, "(j.cluster = ? AND j.job_key = ?)")
			args = append(args, k[0], k[1])
		}
		q += ` AND (` + strings.Join(cond, " OR ") + `)`
	}
	return q, args
}

// recordsOnce runs a query of recordColumns and keeps each job once (see
// onceEach), still up to limit of them.
func (s *Store) recordsOnce(ctx context.Context, q string, limit int, args []any) ([]JobRecord, error) {
	for ask := limit; ; ask += limit {
		recs, err := s.records(ctx, q, ask, args)
		if err != nil {
			return nil, err
		}
		n := len(recs)
		recs = onceEach(recs)
		if limit == 0 || n < ask || len(recs) >= limit {
			if limit > 0 && len(recs) > limit {
				recs = recs[:limit]
			}
			return recs, nil
		}
	}
}

// earlier lists the records of the earlier versions of f's script found by
// path or by name, newest first, at most f.Limit each.
func (s *Store) earlier(ctx context.Context, f HistoryFilter, by string) ([]JobRecord, error) {
	v := f.Versions
	// The jobs of the submissions where holds, and of the clause jobs.
	query := func(where string, whereArgs []any, jobs string, jobArgs []any) ([]JobRecord, error) {
		with, from := s.linked(ctx, where)
		q := with + `SELECT ` + s.readColumns() + ` FROM ` + from +
			submissionsToJobs + ` LEFT JOIN outputs o ON o.cluster = j.cluster AND o.job_key = j.job_key
			WHERE ` + jobs
		recs, err := s.recordsOnce(ctx, q+newestFirst, f.Limit, append(whereArgs, jobArgs...))
		if err != nil && strings.Contains(err.Error(), "no such table") {
			return nil, nil // an older schema, read-only: it has no names
		}
		return recs, err
	}
	other := `s.fingerprint <> ?`
	args := []any{f.Fingerprint}
	if f.Workload != "" {
		other += ` AND s.workload = ?`
		args = append(args, f.Workload)
	}
	switch {
	case by == EarlierByPath && v.Path != "":
		if ok, err := s.any(ctx, `scripts WHERE path = ? AND fingerprint <> ?`, v.Path, f.Fingerprint); !ok || err != nil {
			return nil, err // no other version at this path: spare the join
		}
		return query(`s.fingerprint IN (SELECT fingerprint FROM scripts WHERE path = ?) AND `+other,
			append([]any{v.Path}, args...), "1", nil)
	case by == EarlierByName && len(v.JobNames) > 0:
		jobs := `j.name IN (` + placeholders(len(v.JobNames)) + `)`
		var jobArgs []any
		for _, n := range v.JobNames {
			jobArgs = append(jobArgs, n)
		}
		if v.User != "" {
			jobs += ` AND j.user = ?`
			jobArgs = append(jobArgs, v.User)
		}
		if v.CPUs > 0 {
			// A core of two hardware threads is allocated whole: an odd request may get one more.
			jobs += ` AND j.cpus BETWEEN ? AND ?`
			jobArgs = append(jobArgs, v.CPUs, v.CPUs+v.CPUs%2)
		}
		if v.MemMiB > 0 {
			jobs += ` AND j.req_mem_mib BETWEEN ? AND ?`
			jobArgs = append(jobArgs, v.MemMiB*0.99, v.MemMiB*1.01)
		}
		// The scripts whose jobs had the name (those linked from slurmdbd's
		// scripts: as many as the jobs), through script_names...
		names := `s.fingerprint IN (SELECT fingerprint FROM script_names WHERE name IN (` + placeholders(len(v.JobNames)) + `)`
		var nameArgs []any
		for _, n := range v.JobNames {
			nameArgs = append(nameArgs, n)
		}
		if v.User != "" {
			names += ` AND user = ?`
			nameArgs = append(nameArgs, v.User)
		}
		var recs []JobRecord
		if ok, err := s.any(ctx, `script_names WHERE name IN (`+placeholders(len(v.JobNames))+`) AND fingerprint <> ?`,
			append(nameArgs[:len(v.JobNames):len(v.JobNames)], f.Fingerprint)...); err != nil {
			return nil, err
		} else if ok {
			if recs, err = query(names+`) AND `+other, append(nameArgs, args...), jobs, jobArgs); err != nil {
				return nil, err
			}
		}
		// ...and every submission users made (few), through its partial index.
		if ok, err := s.any(ctx, `submissions WHERE script NOT LIKE 'sacct:%' AND fingerprint <> ?`, f.Fingerprint); !ok || err != nil {
			return recs, err
		}
		mine, err := query(`s.script NOT LIKE 'sacct:%' AND `+other, args, jobs, jobArgs)
		return append(recs, mine...), err
	}
	return nil, nil
}

// records runs a query of recordColumns.
// any reports whether a table has a row where a condition holds ("scripts
// WHERE path = ?"): a cheap look before a query whose preparation alone
// costs the sbatch wrapper a millisecond. An older schema without the
// table has none.
func (s *Store) any(ctx context.Context, tableWhere string, args ...any) (bool, error) {
	var one int
	err := s.db.QueryRowContext(ctx, `SELECT 1 FROM `+tableWhere+` LIMIT 1`, args...).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows) || err != nil && strings.Contains(err.Error(), "no such table"):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read history: %w", err)
	}
	return true, nil
}

func (s *Store) records(ctx context.Context, q string, limit int, args []any) ([]JobRecord, error) {
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	defer rows.Close()
	var out []JobRecord
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, fmt.Errorf("read history: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// scanRecord reads a row of recordColumns, followed by the columns extra
// scans into.
func scanRecord(rows *sql.Rows, extra ...any) (JobRecord, error) {
	var r JobRecord
	var name, user, account, partition, qos, nodes, workDir, by sql.NullString
	var submit, start, end sql.NullInt64
	var fp, script, reqProfile, sweepDir, workload, stdout sql.NullString
	var path, gpuOOM, gpuText, hostText, unit, source, metrics, versions, device sql.NullString
	var monProfile, monUtil, monSource, errFile, errText, settings, resembles sql.NullString
	var truncated, hostOOM, timeLimit, cancelled sql.NullBool
	dest := []any{&r.Cluster, &r.Key, &r.JobID, &r.ArrayJob, &name, &user, &account, &partition, &qos,
		&nodes, &workDir, &r.State, &by, &r.ExitCode, &r.ExitSignal, &submit, &start, &end,
		&r.ElapsedS, &r.TimeLimitMin, &r.Nodes, &r.CPUs, &r.ReqMemMiB, &r.MaxRSSMiB, &r.GPUType, &r.GPUCount,
		&r.Profile, &r.AcctGPUMemMiB, &r.GPUUtil, &r.Stub, &r.JobstatsPeakMiB, &r.JobstatsTotalMiB, &r.JobstatsUtil,
		&fp, &script, &reqProfile, &sweepDir, &workload, &stdout,
		&path, &truncated, &gpuOOM, &gpuText, &r.GPUNeedMiB, &hostOOM, &hostText, &timeLimit,
		&cancelled, &r.Work, &unit, &source, &metrics, &r.MonitorPeakMiB, &r.MonitorTotalMiB, &device,
		&r.MonitorUsedPeakMiB, &monProfile, &monUtil, &r.MonitorUtilMean, &r.MonitorUtilMax, &r.MonitorSamples, &monSource,
		&versions, &r.MonitorMemUtilMean, &r.MonitorMemUtilMax, &errFile, &r.ErrorLine, &errText, &settings,
		&resembles}
	if err := rows.Scan(append(dest, extra...)...); err != nil {
		return r, err
	}
	r.Name, r.User, r.Account, r.Partition, r.QOS = name.String, user.String, account.String, partition.String, qos.String
	r.NodeList, r.WorkDir, r.CancelledBy = nodes.String, workDir.String, by.String
	r.Submit, r.Start, r.End = timePtr(submit), timePtr(start), timePtr(end)
	r.Fingerprint, r.Script, r.RequestedProfile = fp.String, script.String, reqProfile.String
	r.SweepDir, r.Workload, r.Stdout = sweepDir.String, workload.String, stdout.String
	r.OutputPath, r.OutputTruncated, r.GPUOOM, r.GPUOOMText = path.String, truncated.Bool, gpuOOM.String, gpuText.String
	r.HostOOM, r.HostOOMText, r.TimeLimitHit, r.Cancelled = hostOOM.Bool, hostText.String, timeLimit.Bool, cancelled.Bool
	r.WorkUnit, r.WorkSource, r.GPUDevice = unit.String, source.String, device.String
	r.MonitorProfile, r.MonitorUtil, r.MonitorSource = monProfile.String, monUtil.String, monSource.String
	r.ErrorFile, r.ErrorText = errFile.String, errText.String
	r.OutputResembles = resembles.String
	if metrics.Valid {
		if err := json.Unmarshal([]byte(metrics.String), &r.Metrics); err != nil {
			return r, fmt.Errorf("job %s: metrics: %w", r.JobID, err)
		}
	}
	if settings.Valid {
		if err := json.Unmarshal([]byte(settings.String), &r.Settings); err != nil {
			return r, fmt.Errorf("job %s: settings: %w", r.JobID, err)
		}
	}
	if versions.Valid {
		if err := json.Unmarshal([]byte(versions.String), &r.Versions); err != nil {
			return r, fmt.Errorf("job %s: versions: %w", r.JobID, err)
		}
	}
	return r, nil
}

func timePtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := time.Unix(v.Int64, 0)
	return &t
}
