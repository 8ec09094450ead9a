package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

// Submission links a job sbatch accepted to the script it ran.
type Submission struct {
	Cluster     string
	JobID       string // the id sbatch printed
	Fingerprint string
	Source      string // the user's script (the scripts table's path)
	Script      string // the file submitted: a sweep variant, or Source
	Profile     string // the profile asked for, "" if none
	SweepDir    string
	Workload    string
	WorkDir     string
	Stdout      string
	Stderr      string
	Submitted   time.Time
}

// RecordSubmissions stores submissions (and their scripts) in one
// transaction. Recording a job again replaces its earlier record, so `track`
// can move a job to another script or workload.
func (s *Store) RecordSubmissions(ctx context.Context, subs []Submission) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record submissions: %w", err)
	}
	defer tx.Rollback()
	for _, sub := range subs {
		at := sub.Submitted.Unix()
		if _, err := tx.ExecContext(ctx, `INSERT INTO scripts(fingerprint, path, first_seen, last_seen) VALUES (?, ?, ?, ?)
			ON CONFLICT(fingerprint) DO UPDATE SET path = excluded.path, last_seen = max(last_seen, excluded.last_seen)`,
			sub.Fingerprint, sub.Source, at, at); err != nil {
			return fmt.Errorf("record submission %s: %w", sub.JobID, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO submissions(cluster, job_id, fingerprint, script, profile,
			sweep_dir, workload, work_dir, stdout, stderr, submitted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			sub.Cluster, sub.JobID, sub.Fingerprint, sub.Script, sub.Profile, sub.SweepDir, sub.Workload,
			sub.WorkDir, sub.Stdout, sub.Stderr, at); err != nil {
			return fmt.Errorf("record submission %s: %w", sub.JobID, err)
		}
	}
	return tx.Commit()
}

// AdoptSubmissions gives the submissions recorded without a cluster name
// (by the sbatch wrapper, from sbatch's output) the cluster's name; one
// already recorded under that name stays as it is.
func (s *Store) AdoptSubmissions(ctx context.Context, cluster string) error {
	if cluster == "" {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE OR IGNORE submissions SET cluster = ? WHERE cluster = ''`, cluster); err != nil {
		return fmt.Errorf("name the cluster of submissions: %w", err)
	}
	return nil
}

// placeholders is "?,?,…" for n parameters of an IN list.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// jobsOfSubmission joins a submission (s) to its jobs (j) through indexes:
// the job sbatch printed, and the tasks of its array or the components of its
// heterogeneous job. (An OR of the two in the join would scan the cluster's
// jobs for each submission.)
const jobsOfSubmission = `j.cluster = s.cluster AND j.job_key IN (SELECT s.job_id UNION ALL
	SELECT a.job_key FROM jobs a WHERE a.cluster = s.cluster AND a.array_job = s.job_id AND a.array_job <> a.job_key)`

// Tracked is a submission with the jobs accounting knows for it (several for
// an array or a heterogeneous job; none before the first collect).
type Tracked struct {
	Submission
	Jobs []TrackedJob
}

// TrackedJob is the state accounting last gave for one job of a submission.
type TrackedJob struct {
	Key, ID, State string
	Stub           bool
}

// Ended reports whether accounting has the final record of every job of t.
func (t Tracked) Ended() bool {
	if len(t.Jobs) == 0 {
		return false
	}
	for _, j := range t.Jobs {
		if j.Stub || !slurm.TerminalState(j.State) {
			return false
		}
	}
	return true
}

// Unended lists the job ids of the submissions that have not ended.
func Unended(tracked []Tracked) []string {
	var ids []string
	for _, t := range tracked {
		if !t.Ended() {
			ids = append(ids, t.JobID)
		}
	}
	return ids
}

// TrackedFilter selects submissions.
type TrackedFilter struct {
	JobIDs   []string // sbatch's ids; empty: all
	SweepDir string
}

// Tracked lists submissions, oldest first, with their jobs' last known states.
func (s *Store) Tracked(ctx context.Context, f TrackedFilter) ([]Tracked, error) {
	q := `SELECT s.cluster, s.job_id, s.fingerprint, coalesce(sc.path, ''), s.script, s.profile, s.sweep_dir, s.workload,
		s.work_dir, s.stdout, s.stderr, s.submitted, j.job_key, j.job_id, j.state, j.stub
		FROM submissions s LEFT JOIN scripts sc USING (fingerprint)
		LEFT JOIN jobs j ON ` + jobsOfSubmission + ` WHERE 1`
	var args []any
	if len(f.JobIDs) > 0 {
		q += ` AND s.job_id IN (` + placeholders(len(f.JobIDs)) + `)`
		for _, id := range f.JobIDs {
			args = append(args, id)
		}
	}
	if f.SweepDir != "" {
		q += ` AND s.sweep_dir = ?`
		args = append(args, f.SweepDir)
	}
	q += ` ORDER BY s.submitted, CAST(s.job_id AS INTEGER), s.job_id, j.job_key`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list tracked jobs: %w", err)
	}
	defer rows.Close()
	var out []Tracked
	for rows.Next() {
		var t Tracked
		var at int64
		var key, id, state sql.NullString
		var stub sql.NullBool
		if err := rows.Scan(&t.Cluster, &t.JobID, &t.Fingerprint, &t.Source, &t.Script, &t.Profile, &t.SweepDir, &t.Workload,
			&t.WorkDir, &t.Stdout, &t.Stderr, &at, &key, &id, &state, &stub); err != nil {
			return nil, fmt.Errorf("list tracked jobs: %w", err)
		}
		t.Submitted = time.Unix(at, 0)
		if n := len(out); n > 0 && out[n-1].Cluster == t.Cluster && out[n-1].JobID == t.JobID {
			t = out[n-1]
			out = out[:n-1]
		}
		if key.Valid {
			t.Jobs = append(t.Jobs, TrackedJob{Key: key.String, ID: id.String, State: state.String, Stub: stub.Bool})
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RecordOutput stores what a job's output file showed, replacing an earlier scan.
func (s *Store) RecordOutput(ctx context.Context, cluster, key, path string, size int64, mtime time.Time, ev *slurm.OutputEvidence) error {
	var gpuOOM, gpuText, hostText any
	var gpuLine, gpuNeed any
	if o := ev.GPUOOM; o != nil {
		gpuOOM, gpuText, gpuNeed = o.Source, o.Text, knownF(o.NeedMiB)
		if o.Line > 0 {
			gpuLine = o.Line
		}
	}
	if ev.HostOOM != nil {
		hostText = ev.HostOOM.Text
	}
	metrics, err := jsonColumn(ev.Metrics)
	if err != nil {
		return err
	}
	versions, err := jsonColumn(ev.Versions)
	if err != nil {
		return err
	}
	var work, unit, source any
	if ev.Work >= 0 || ev.WorkSource != "" {
		work, unit, source = ev.Work, ev.WorkUnit, ev.WorkSource
	}
	_, err = s.db.ExecContext(ctx, `INSERT OR REPLACE INTO outputs(cluster, job_key, path, size, mtime, truncated,
		gpu_oom, gpu_oom_line, gpu_oom_text, gpu_need_mib, host_oom, host_oom_text, time_limit, cancelled,
		work, work_unit, work_source, metrics, gpu_peak_mib, gpu_total_mib, gpu_device,
		gpu_used_peak_mib, gpu_profile, gpu_util, gpu_util_mean, gpu_util_max, gpu_samples, gpu_source, versions)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		cluster, key, path, size, mtime.Unix(), ev.Truncated, gpuOOM, gpuLine, gpuText, gpuNeed,
		ev.HostOOM != nil, hostText, ev.TimeLimit, ev.Cancelled, work, unit, source, metrics,
		knownF(ev.GPUPeakMiB), knownF(ev.GPUTotalMiB), nullIfEmpty(ev.GPUDevice),
		knownF(ev.GPUUsedPeakMiB), nullIfEmpty(ev.GPUProfile), nullIfEmpty(ev.GPUUtil), knownF(ev.GPUUtilMean),
		knownF(ev.GPUUtilMax), gpuSamples(ev), nullIfEmpty(ev.GPUSource), versions)
	if err != nil {
		return fmt.Errorf("record output of job %s: %w", key, err)
	}
	return nil
}

// jsonColumn is a map as a JSON object for a TEXT column, NULL when empty.
func jsonColumn[V any](m map[string]V) (any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

func gpuSamples(ev *slurm.OutputEvidence) any {
	if ev.GPUSource == "" {
		return nil
	}
	return ev.GPUSamples
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// ScannedOutput is the file an earlier collect scanned for a job.
type ScannedOutput struct {
	Path  string
	Size  int64
	MTime time.Time
}

// ScannedOutputs lists the output files already scanned, by cluster and job key.
func (s *Store) ScannedOutputs(ctx context.Context) (map[[2]string]ScannedOutput, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT cluster, job_key, path, size, mtime FROM outputs`)
	if err != nil {
		return nil, fmt.Errorf("list scanned outputs: %w", err)
	}
	defer rows.Close()
	out := map[[2]string]ScannedOutput{}
	for rows.Next() {
		var c, k string
		var o ScannedOutput
		var mt int64
		if err := rows.Scan(&c, &k, &o.Path, &o.Size, &mt); err != nil {
			return nil, err
		}
		o.MTime = time.Unix(mt, 0)
		out[[2]string{c, k}] = o
	}
	return out, rows.Err()
}

// JobRecord is one job's evidence: accounting, its link to a script, and
// what its output showed. Pointers are nil where the evidence is unknown.
type JobRecord struct {
	Cluster, Key, JobID, ArrayJob                          string
	Name, User, Account, Partition, QOS, NodeList, WorkDir string
	State, CancelledBy                                     string
	ExitCode, ExitSignal                                   *int64
	Submit, Start, End                                     *time.Time
	ElapsedS, TimeLimitMin                                 *int64
	Nodes, CPUs                                            *int64
	ReqMemMiB, MaxRSSMiB                                   *float64
	GPUType                                                string
	GPUCount                                               int64
	Profile                                                string
	AcctGPUMemMiB, GPUUtil                                 *float64
	Stub                                                   bool

	// The submission, when the job is linked to a script.
	Fingerprint, Script, RequestedProfile, SweepDir, Workload, Stdout string

	// The output file's evidence, when it was scanned.
	OutputPath      string
	OutputTruncated bool
	GPUOOM          string // the framework that reported it
	GPUOOMText      string
	GPUNeedMiB      *float64
	HostOOM         bool
	HostOOMText     string
	TimeLimitHit    bool
	Cancelled       bool
	Work            *float64
	WorkUnit        string
	WorkSource      string
	Metrics         map[string]float64
	Versions        map[string]string // software the job reported running
	// The monitor's figures (see slurm.OutputEvidence).
	MonitorPeakMiB     *float64
	MonitorUsedPeakMiB *float64
	MonitorTotalMiB    *float64
	GPUDevice          string
	MonitorProfile     string
	MonitorUtil        string
	MonitorUtilMean    *float64
	MonitorUtilMax     *float64
	MonitorSamples     *int64
	MonitorSource      string
}

// OOM is "gpu" when the job's output shows a GPU out-of-memory error, "host"
// when Slurm killed it for host memory, "" otherwise.
func (r *JobRecord) OOM() string {
	switch {
	case r.GPUOOM != "":
		return slurm.OOMGPU
	case r.HostOOM || r.State == "OUT_OF_MEMORY":
		return slurm.OOMHost
	}
	return ""
}

// GPUMemPeakMiB is the job's peak GPU memory: the monitor's (its processes'
// where the driver reported them), else accounting's gres/gpumem.
func (r *JobRecord) GPUMemPeakMiB() *float64 {
	if r.MonitorPeakMiB != nil {
		return r.MonitorPeakMiB
	}
	return r.AcctGPUMemMiB
}

// GPUMemSource says where GPUMemPeakMiB comes from: "monitor", "sacct", or "".
func (r *JobRecord) GPUMemSource() string {
	switch {
	case r.MonitorPeakMiB != nil:
		return "monitor"
	case r.AcctGPUMemMiB != nil:
		return "sacct"
	}
	return ""
}

// HistoryFilter selects job records.
type HistoryFilter struct {
	Fingerprint string // jobs linked to this script; "" for every job
	Workload    string // jobs tagged with this workload
	Tracked     bool   // only jobs linked to a script
	Keys        [][2]string
	Limit       int // newest first, at most this many; 0 for all
}

// History lists job records, newest submission first.
func (s *Store) History(ctx context.Context, f HistoryFilter) ([]JobRecord, error) {
	// From a script's submissions to their jobs, through indexes: a whole
	// cluster's history must not be scanned for one script.
	from := `jobs j LEFT JOIN submissions s ON s.cluster = j.cluster AND s.job_id = j.array_job`
	if f.Fingerprint != "" || f.Workload != "" {
		from = `submissions s JOIN jobs j ON ` + jobsOfSubmission
	}
	q := `SELECT j.cluster, j.job_key, j.job_id, j.array_job, j.name, j.user, j.account, j.partition, j.qos,
		j.node_list, j.work_dir, j.state, j.cancelled_by, j.exit_code, j.exit_signal, j.submit, j.start, j.end,
		j.elapsed_s, j.timelimit_min, j.nodes, j.cpus, j.req_mem_mib, j.max_rss_mib, j.gpu_type, j.gpu_count,
		j.profile, j.gpu_mem_mib, j.gpu_util, j.stub,
		s.fingerprint, s.script, s.profile, s.sweep_dir, s.workload, s.stdout,
		o.path, o.truncated, o.gpu_oom, o.gpu_oom_text, o.gpu_need_mib, o.host_oom, o.host_oom_text, o.time_limit,
		o.cancelled, o.work, o.work_unit, o.work_source, o.metrics, o.gpu_peak_mib, o.gpu_total_mib, o.gpu_device,
		o.gpu_used_peak_mib, o.gpu_profile, o.gpu_util, o.gpu_util_mean, o.gpu_util_max, o.gpu_samples, o.gpu_source,
		o.versions
		FROM ` + from + `
		LEFT JOIN outputs o ON o.cluster = j.cluster AND o.job_key = j.job_key WHERE 1`
	var args []any
	if f.Fingerprint != "" {
		q += ` AND s.fingerprint = ?`
		args = append(args, f.Fingerprint)
	}
	if f.Workload != "" {
		q += ` AND s.workload = ?`
		args = append(args, f.Workload)
	}
	if f.Tracked {
		q += ` AND s.job_id IS NOT NULL`
	}
	if len(f.Keys) > 0 {
		var cond []string
		for _, k := range f.Keys {
			cond = append(cond, "(j.cluster = ? AND j.job_key = ?)")
			args = append(args, k[0], k[1])
		}
		q += ` AND (` + strings.Join(cond, " OR ") + `)`
	}
	q += ` ORDER BY coalesce(j.submit, 0) DESC, CAST(j.job_key AS INTEGER) DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
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

func scanRecord(rows *sql.Rows) (JobRecord, error) {
	var r JobRecord
	var name, user, account, partition, qos, nodes, workDir, by sql.NullString
	var submit, start, end sql.NullInt64
	var fp, script, reqProfile, sweepDir, workload, stdout sql.NullString
	var path, gpuOOM, gpuText, hostText, unit, source, metrics, versions, device sql.NullString
	var monProfile, monUtil, monSource sql.NullString
	var truncated, hostOOM, timeLimit, cancelled sql.NullBool
	err := rows.Scan(&r.Cluster, &r.Key, &r.JobID, &r.ArrayJob, &name, &user, &account, &partition, &qos,
		&nodes, &workDir, &r.State, &by, &r.ExitCode, &r.ExitSignal, &submit, &start, &end,
		&r.ElapsedS, &r.TimeLimitMin, &r.Nodes, &r.CPUs, &r.ReqMemMiB, &r.MaxRSSMiB, &r.GPUType, &r.GPUCount,
		&r.Profile, &r.AcctGPUMemMiB, &r.GPUUtil, &r.Stub,
		&fp, &script, &reqProfile, &sweepDir, &workload, &stdout,
		&path, &truncated, &gpuOOM, &gpuText, &r.GPUNeedMiB, &hostOOM, &hostText, &timeLimit,
		&cancelled, &r.Work, &unit, &source, &metrics, &r.MonitorPeakMiB, &r.MonitorTotalMiB, &device,
		&r.MonitorUsedPeakMiB, &monProfile, &monUtil, &r.MonitorUtilMean, &r.MonitorUtilMax, &r.MonitorSamples, &monSource,
		&versions)
	if err != nil {
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
	if metrics.Valid {
		if err := json.Unmarshal([]byte(metrics.String), &r.Metrics); err != nil {
			return r, fmt.Errorf("job %s: metrics: %w", r.JobID, err)
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

// QueueWait is the median time jobs of some GPU types waited to start.
type QueueWait struct {
	MedianS float64
	Jobs    int // how many jobs it is the median of
}

// QueueWait reads the wait (Start − Submit) of the newest jobs, at most
// limit, submitted since a time and asking for one of the GPU types.
func (s *Store) QueueWait(ctx context.Context, gpuTypes []string, since time.Time, limit int) (QueueWait, error) {
	var waits []float64
	for _, t := range gpuTypes {
		rows, err := s.db.QueryContext(ctx, `SELECT start - submit FROM jobs INDEXED BY jobs_by_gpu_type
			WHERE gpu_type = ? AND submit >= ? AND start IS NOT NULL AND start >= submit AND stub = 0
			ORDER BY submit DESC LIMIT ?`, t, since.Unix(), limit)
		if err != nil {
			return QueueWait{}, fmt.Errorf("read queue waits: %w", err)
		}
		for rows.Next() {
			var w float64
			if err := rows.Scan(&w); err != nil {
				rows.Close()
				return QueueWait{}, err
			}
			waits = append(waits, w)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return QueueWait{}, err
		}
	}
	if len(waits) == 0 {
		return QueueWait{}, nil
	}
	slices.Sort(waits)
	n := len(waits)
	m := waits[n/2]
	if n%2 == 0 {
		m = (waits[n/2-1] + waits[n/2]) / 2
	}
	return QueueWait{MedianS: m, Jobs: n}, nil
}

// WorkloadCount is a workload tag and how many submissions carry it (an
// array counts once).
type WorkloadCount struct {
	Workload    string
	Submissions int
}

// Workloads lists the workload tags of the history's submissions, by name.
func (s *Store) Workloads(ctx context.Context) ([]WorkloadCount, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT workload, count(*) FROM submissions
		WHERE workload <> '' GROUP BY workload ORDER BY workload`)
	if err != nil {
		return nil, fmt.Errorf("list workloads: %w", err)
	}
	defer rows.Close()
	var out []WorkloadCount
	for rows.Next() {
		var w WorkloadCount
		if err := rows.Scan(&w.Workload, &w.Submissions); err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}
