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
	// JobName and User find the job of a submission recorded without its
	// id (JobID ""): the wrapper's advice beside Slurm's sbatch never sees
	// sbatch's answer. It waits in pending_submissions until LinkPending.
	JobName string `json:",omitempty"`
	User    string `json:",omitempty"`
	// Token tells apart submissions recorded without their ids: unique to
	// one (the wrapper's process and clock), the same however often it is
	// drained.
	Token string `json:",omitempty"`
	// ScriptHash is the hash of the script's bytes as sbatch read them
	// (ScriptHash), for a submission recorded without its id: collect
	// checks it against the script slurmdbd stored for the job.
	ScriptHash string `json:",omitempty"`
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
		if sub.JobID == "" {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO pending_submissions(fingerprint, submitted, token, user, job_name,
				work_dir, cluster, script, profile, script_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, sub.Fingerprint, sub.Submitted.UnixMicro(),
				sub.Token, sub.User, sub.JobName, sub.WorkDir, sub.Cluster, sub.Script, sub.Profile, sub.ScriptHash); err != nil {
				return fmt.Errorf("record a submission of %s: %w", sub.Script, err)
			}
			continue
		}
		// A record without a cluster name (the wrapper's, from the spool)
		// that a collect already named (AdoptSubmissions) is not recorded
		// again: two processes may drain the same spooled file.
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO submissions(cluster, job_id, fingerprint, script, profile,
			sweep_dir, workload, work_dir, stdout, stderr, submitted) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
			WHERE ? <> '' OR NOT EXISTS (SELECT 1 FROM submissions WHERE fingerprint = ? AND job_id = ? AND submitted = ? AND cluster <> '')`,
			sub.Cluster, sub.JobID, sub.Fingerprint, sub.Script, sub.Profile, sub.SweepDir, sub.Workload,
			sub.WorkDir, sub.Stdout, sub.Stderr, at, sub.Cluster, sub.Fingerprint, sub.JobID, at); err != nil {
			return fmt.Errorf("record submission %s: %w", sub.JobID, err)
		}
		// The job's name and user, when its record is here, find this
		// fingerprint's runs as an earlier version of a script of that name.
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO script_names(name, user, fingerprint)
			SELECT name, coalesce(user, ''), ? FROM jobs WHERE cluster = ? AND job_key = ? AND name IS NOT NULL`,
			sub.Fingerprint, sub.Cluster, sub.JobID); err != nil {
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
	// What stays unnamed is already there under the name: the same record
	// drained twice (a history from before RecordSubmissions knew it).
	if _, err := s.db.ExecContext(ctx, `DELETE FROM submissions WHERE cluster = '' AND EXISTS (SELECT 1 FROM submissions t
		WHERE t.cluster = ? AND t.job_id = submissions.job_id AND t.fingerprint = submissions.fingerprint AND t.submitted = submissions.submitted)`,
		cluster); err != nil {
		return fmt.Errorf("name the cluster of submissions: %w", err)
	}
	return nil
}

// placeholders is "?,?,…" for n parameters of an IN list.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// jobsOfSubmission joins a submission (s, from linkedSubmissions) to its
// jobs (j) through indexes: the job sbatch printed, and the tasks of its
// array or the components of its heterogeneous job, under the cluster they
// are filed under. (An OR of the two in the join would scan the cluster's
// jobs for each submission.)
const jobsOfSubmission = `j.cluster = s.home AND j.job_key IN (SELECT s.job_id UNION ALL
	SELECT a.job_key FROM jobs a WHERE a.cluster = s.home AND a.array_job = s.job_id AND a.array_job <> a.job_key)`

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
	Profile        string // the site's profile for the GPU it had, "" if none
	Submit         int64  // unix seconds; 0 if unknown
	End            int64  // unix seconds; 0 if it has not ended or is unknown
}

// EndedAt is when the last job of t ended, zero when accounting gave no
// end time.
func (t Tracked) EndedAt() time.Time {
	var last int64
	for _, j := range t.Jobs {
		last = max(last, j.End)
	}
	if last == 0 {
		return time.Time{}
	}
	return time.Unix(last, 0)
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
	JobIDs      []string // sbatch's ids; empty: all
	SweepDir    string
	Fingerprint string // a script's submissions
}

// Tracked lists submissions, oldest first, with their jobs' last known
// states. A submission whose jobs the history holds under another cluster
// name only (see homeCluster) is listed under that name.
func (s *Store) Tracked(ctx context.Context, f TrackedFilter) ([]Tracked, error) {
	where := []string{"1"}
	var args []any
	if len(f.JobIDs) > 0 {
		where = append(where, `s.job_id IN (`+placeholders(len(f.JobIDs))+`)`)
		for _, id := range f.JobIDs {
			args = append(args, id)
		}
	}
	if f.SweepDir != "" {
		where = append(where, `s.sweep_dir = ?`)
		args = append(args, f.SweepDir)
	}
	if f.Fingerprint != "" {
		where = append(where, `s.fingerprint = ?`)
		args = append(args, f.Fingerprint)
	}
	with, from := s.linked(ctx, strings.Join(where, " AND "))
	q := with + `SELECT s.cluster, s.home, s.job_id, s.fingerprint, coalesce(sc.path, ''), s.script, s.profile, s.sweep_dir, s.workload,
		s.work_dir, s.stdout, s.stderr, s.submitted, j.job_key, j.job_id, j.state, j.stub, j.profile, coalesce(j.submit, 0), coalesce(j.end, 0)
		FROM ` + from + ` s LEFT JOIN scripts sc USING (fingerprint)
		LEFT JOIN jobs j ON ` + jobsOfSubmission
	q += ` ORDER BY s.submitted, CAST(s.job_id AS INTEGER), s.job_id, s.cluster, j.job_key`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list tracked jobs: %w", err)
	}
	defer rows.Close()
	var out []Tracked
	var filedUnder []string // each submission's own cluster (Cluster is its jobs')
	for rows.Next() {
		var t Tracked
		var own string
		var at int64
		var key, id, state, profile sql.NullString
		var stub sql.NullBool
		var submit, end sql.NullInt64
		if err := rows.Scan(&own, &t.Cluster, &t.JobID, &t.Fingerprint, &t.Source, &t.Script, &t.Profile, &t.SweepDir, &t.Workload,
			&t.WorkDir, &t.Stdout, &t.Stderr, &at, &key, &id, &state, &stub, &profile, &submit, &end); err != nil {
			return nil, fmt.Errorf("list tracked jobs: %w", err)
		}
		t.Submitted = time.Unix(at, 0)
		if n := len(out); n > 0 && filedUnder[n-1] == own && out[n-1].JobID == t.JobID {
			t = out[n-1]
			out, filedUnder = out[:n-1], filedUnder[:n-1]
		}
		if key.Valid {
			t.Jobs = append(t.Jobs, TrackedJob{Key: key.String, ID: id.String, State: state.String, Stub: stub.Bool,
				Profile: profile.String, Submit: submit.Int64, End: end.Int64})
		}
		out, filedUnder = append(out, t), append(filedUnder, own)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tracked jobs: %w", err)
	}
	return oncePerJob(out), nil
}

// oncePerJob drops the submissions of a job that a later submission links
// too (the same id under two cluster names, linked to the same jobs or to
// the same jobs under two names): the later one stands, as tracking a job
// again moves it.
func oncePerJob(tracked []Tracked) []Tracked {
	latest := map[string]int{} // the jobs, as one string, to the last submission linking them
	for i, t := range tracked {
		if len(t.Jobs) > 0 {
			latest[trackedJobs(t)] = i
		}
	}
	out := tracked[:0]
	for i, t := range tracked {
		if len(t.Jobs) == 0 || latest[trackedJobs(t)] == i {
			out = append(out, t)
		}
	}
	return out
}

// trackedJobs names a submission's jobs by id, key and submit time, which
// do not change with the cluster's name.
func trackedJobs(t Tracked) string {
	var b strings.Builder
	b.WriteString(t.JobID)
	for _, j := range t.Jobs {
		fmt.Fprintf(&b, " %s@%d", j.Key, j.Submit)
		if j.Submit == 0 {
			b.WriteString(t.Cluster) // unknown times: only the same record is the same job
		}
	}
	return b.String()
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
	settings, err := jsonColumn(ev.Settings)
	if err != nil {
		return err
	}
	var errFile, errLine, errText any
	if e := ev.FirstError; e != nil {
		errFile, errText = e.File, e.Text
		if e.Line > 0 {
			errLine = e.Line
		}
	}
	var work, unit, source any
	if ev.Work >= 0 || ev.WorkSource != "" {
		work, unit, source = ev.Work, ev.WorkUnit, ev.WorkSource
	}
	_, err = s.db.ExecContext(ctx, `INSERT OR REPLACE INTO outputs(cluster, job_key, path, size, mtime, truncated,
		gpu_oom, gpu_oom_line, gpu_oom_text, gpu_need_mib, host_oom, host_oom_text, time_limit, cancelled,
		work, work_unit, work_source, metrics, gpu_peak_mib, gpu_total_mib, gpu_device,
		gpu_used_peak_mib, gpu_profile, gpu_util, gpu_util_mean, gpu_util_max, gpu_samples, gpu_source, versions,
		gpu_mem_util_mean, gpu_mem_util_max, error_file, error_line, error_text, settings)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		cluster, key, path, size, mtime.Unix(), ev.Truncated, gpuOOM, gpuLine, gpuText, gpuNeed,
		ev.HostOOM != nil, hostText, ev.TimeLimit, ev.Cancelled, work, unit, source, metrics,
		knownF(ev.GPUPeakMiB), knownF(ev.GPUTotalMiB), nullIfEmpty(ev.GPUDevice),
		knownF(ev.GPUUsedPeakMiB), nullIfEmpty(ev.GPUProfile), nullIfEmpty(ev.GPUUtil), knownF(ev.GPUUtilMean),
		knownF(ev.GPUUtilMax), gpuSamples(ev), nullIfEmpty(ev.GPUSource), versions,
		knownF(ev.GPUMemUtilMean), knownF(ev.GPUMemUtilMax), errFile, errLine, errText, settings)
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
	// What jobstats recorded (its summary in AdminComment): the largest GPU
	// memory in use, sampled every 30 s or so, that GPU's total, and the
	// mean utilization of the GPUs that report one.
	JobstatsPeakMiB, JobstatsTotalMiB, JobstatsUtil *float64

	// The submission, when the job is linked to a script.
	Fingerprint, Script, RequestedProfile, SweepDir, Workload, Stdout string
	// Earlier marks a job of an earlier version of the script a history
	// was read for (HistoryFilter.Versions), found by EarlierBy.
	Earlier   bool
	EarlierBy string

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
	Settings        map[string]string // settings it ran with (MIGADVISOR_SETTING)
	// The first line of the output that reads as an error, and its file
	// (the --error file where there is one): ErrorLine 0 when unknown.
	ErrorFile, ErrorText string
	ErrorLine            *int64
	// The monitor's figures (see slurm.OutputEvidence).
	MonitorPeakMiB     *float64
	MonitorUsedPeakMiB *float64
	MonitorTotalMiB    *float64
	GPUDevice          string
	MonitorProfile     string
	MonitorUtil        string
	MonitorUtilMean    *float64
	MonitorUtilMax     *float64
	// The share of time device memory was read or written (NVML's memory
	// utilization), %: known with MonitorUtil "supported".
	MonitorMemUtilMean *float64
	MonitorMemUtilMax  *float64
	MonitorSamples     *int64
	MonitorSource      string

	// Emulated are the runs of the emulation the job ran (migadvisor
	// emulate: its command once per MIG profile on a whole GPU under MPS
	// limits), in the emulation's order; none for most jobs.
	Emulated []EmulatedRun
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

// GPUMemPeakMiB is the job's peak GPU memory from the most trustworthy of
// its sources (GPUMemSource): the monitor's, sampled in the job every half
// second (its processes' where the driver reported them); else jobstats',
// sampled every 30 s or so on every GPU of the job; else accounting's
// gres/gpumem, sampled as often, of one GPU of a step before Slurm 24.05.1.
func (r *JobRecord) GPUMemPeakMiB() *float64 {
	switch {
	case r.MonitorPeakMiB != nil:
		return r.MonitorPeakMiB
	case r.JobstatsPeakMiB != nil:
		return r.JobstatsPeakMiB
	}
	return r.AcctGPUMemMiB
}

// GPUMemPeaks are every source's peak GPU memory of the job, by source
// (monitor, jobstats, sacct); those missing are left out.
func (r *JobRecord) GPUMemPeaks() map[string]float64 {
	out := map[string]float64{}
	for source, v := range map[string]*float64{PeakMonitor: r.MonitorPeakMiB, PeakJobstats: r.JobstatsPeakMiB, PeakSacct: r.AcctGPUMemMiB} {
		if v != nil {
			out[source] = *v
		}
	}
	return out
}

// Sources of a job's peak GPU memory, most trustworthy first.
const (
	PeakMonitor  = "monitor"
	PeakJobstats = "jobstats"
	PeakSacct    = "sacct"
)

// ReachedTimeLimit reports whether the job ended at its time limit: Slurm
// says TIMEOUT, or its output said the limit was hit (a job that trapped
// the signal and exited on its own).
func (r *JobRecord) ReachedTimeLimit() bool {
	return r.State == "TIMEOUT" || r.TimeLimitHit
}

// GPUUtilizationPct is the job's mean GPU utilization, %: the monitor's
// where the device reports utilization, else jobstats', else accounting's
// gres/gpuutil; nil when none has one (an A100 MIG slice reports none).
func (r *JobRecord) GPUUtilizationPct() *float64 {
	switch {
	case r.MonitorUtilMean != nil && r.MonitorUtil == "supported":
		return r.MonitorUtilMean
	case r.JobstatsUtil != nil:
		return r.JobstatsUtil
	}
	return r.GPUUtil
}

// GPUMemUtilizationPct is the job's mean memory (DRAM) utilization, %: the
// share of time the monitor saw device memory read or written, where the
// device reports utilization; nil when it has none (an A100 MIG slice
// reports none; accounting has no such figure).
func (r *JobRecord) GPUMemUtilizationPct() *float64 {
	if r.MonitorMemUtilMean != nil && r.MonitorUtil == "supported" {
		return r.MonitorMemUtilMean
	}
	return nil
}

// GPUMemSource says where GPUMemPeakMiB comes from: PeakMonitor,
// PeakJobstats, PeakSacct, or "".
func (r *JobRecord) GPUMemSource() string {
	switch {
	case r.MonitorPeakMiB != nil:
		return PeakMonitor
	case r.JobstatsPeakMiB != nil:
		return PeakJobstats
	case r.AcctGPUMemMiB != nil:
		return PeakSacct
	}
	return ""
}

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
	// Named: only the jobs of these users of these job names.
	Ended, EndedOutside Period
	GPU                 bool
	Named               []UserJobName
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
	o.versions, o.gpu_mem_util_mean, o.gpu_mem_util_max, o.error_file, o.error_line, o.error_text, o.settings`

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
	return cols
}

// newestFirst orders job records as History lists them.
const newestFirst = ` ORDER BY coalesce(j.submit, 0) DESC, CAST(j.job_key AS INTEGER) DESC, j.job_key, j.cluster`

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
	// cluster's history must not be scanned for one script.
	q := `SELECT ` + s.readColumns() + ` FROM jobs j LEFT JOIN submissions s ON s.cluster = j.cluster AND s.job_id = j.array_job`
	if len(where) > 0 {
		with, from := s.linked(ctx, strings.Join(where, " AND "))
		q = with + `SELECT ` + s.readColumns() + ` FROM ` + from + ` s JOIN jobs j ON ` + jobsOfSubmission
	}
	q += ` LEFT JOIN outputs o ON o.cluster = j.cluster AND o.job_key = j.job_key WHERE 1`
	if f.Tracked {
		q += ` AND s.job_id IS NOT NULL`
	}
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
	return s.recordsOnce(ctx, q+newestFirst, f.Limit, args)
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
			` s JOIN jobs j ON ` + jobsOfSubmission + ` LEFT JOIN outputs o ON o.cluster = j.cluster AND o.job_key = j.job_key
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

func scanRecord(rows *sql.Rows) (JobRecord, error) {
	var r JobRecord
	var name, user, account, partition, qos, nodes, workDir, by sql.NullString
	var submit, start, end sql.NullInt64
	var fp, script, reqProfile, sweepDir, workload, stdout sql.NullString
	var path, gpuOOM, gpuText, hostText, unit, source, metrics, versions, device sql.NullString
	var monProfile, monUtil, monSource, errFile, errText, settings sql.NullString
	var truncated, hostOOM, timeLimit, cancelled sql.NullBool
	err := rows.Scan(&r.Cluster, &r.Key, &r.JobID, &r.ArrayJob, &name, &user, &account, &partition, &qos,
		&nodes, &workDir, &r.State, &by, &r.ExitCode, &r.ExitSignal, &submit, &start, &end,
		&r.ElapsedS, &r.TimeLimitMin, &r.Nodes, &r.CPUs, &r.ReqMemMiB, &r.MaxRSSMiB, &r.GPUType, &r.GPUCount,
		&r.Profile, &r.AcctGPUMemMiB, &r.GPUUtil, &r.Stub, &r.JobstatsPeakMiB, &r.JobstatsTotalMiB, &r.JobstatsUtil,
		&fp, &script, &reqProfile, &sweepDir, &workload, &stdout,
		&path, &truncated, &gpuOOM, &gpuText, &r.GPUNeedMiB, &hostOOM, &hostText, &timeLimit,
		&cancelled, &r.Work, &unit, &source, &metrics, &r.MonitorPeakMiB, &r.MonitorTotalMiB, &device,
		&r.MonitorUsedPeakMiB, &monProfile, &monUtil, &r.MonitorUtilMean, &r.MonitorUtilMax, &r.MonitorSamples, &monSource,
		&versions, &r.MonitorMemUtilMean, &r.MonitorMemUtilMax, &errFile, &r.ErrorLine, &errText, &settings)
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
	r.ErrorFile, r.ErrorText = errFile.String, errText.String
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
