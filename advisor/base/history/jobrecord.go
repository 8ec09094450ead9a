package history

import (
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

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
	// OutputResembles is the reference benchmark the output resembles (the
	// first of the site's whose line it holds: slurm.OutputWorkload), ""
	// for none: what the job is where its script is not known.
	OutputResembles string
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
