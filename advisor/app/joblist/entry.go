// Package joblist is a job of the history as `migadvisor history` lists it:
// its JSON (JobEntry, EntryOf) and its table (WriteTable).
package joblist

import (
	"math"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// JobEntry is one job as history lists it, and its JSON: the record's
// figures, rounded as printed, its price, and what held its GPU memory.
type JobEntry struct {
	JobID            string             `json:"job_id"`
	JobKey           string             `json:"job_key"` // JobIDRaw
	Cluster          string             `json:"cluster"`
	Name             string             `json:"name"`
	User             string             `json:"user"`
	Partition        string             `json:"partition"`
	QoS              string             `json:"qos"`
	Profile          *string            `json:"profile"`
	RequestedProfile *string            `json:"requested_profile"`
	GPUType          string             `json:"gpu_type"`
	GPUCount         int64              `json:"gpu_count"`
	State            string             `json:"state"`
	ExitCode         *int64             `json:"exit_code"`
	ExitSignal       *int64             `json:"exit_signal"`
	Submit           *time.Time         `json:"submit"`
	Start            *time.Time         `json:"start"`
	End              *time.Time         `json:"end"`
	ElapsedS         *int64             `json:"elapsed_s"`
	TimeLimitMin     *int64             `json:"timelimit_min"`
	CPUs             *int64             `json:"cpus"`
	ReqMemMiB        *float64           `json:"req_mem_mib"`
	MaxRSSMiB        *float64           `json:"max_rss_mib"`
	GPUMemPeakMiB    *float64           `json:"gpu_mem_peak_mib"`
	GPUMemSource     *string            `json:"gpu_mem_source"` // the peak's: monitor, jobstats or sacct (gres/gpumem)
	GPUMemPeaks      map[string]float64 `json:"gpu_mem_peaks"`  // every source's peak, MiB; "framework": the job's own allocated peak
	// GPUMemHeldBy is what held the memory, as the job's output shows it:
	// a caching or preallocating framework's peak is a ceiling, no need.
	GPUMemHeldBy   *memory.Holder     `json:"gpu_mem_held_by,omitempty"`
	GPUMemTotalMiB *float64           `json:"gpu_mem_total_mib"`
	GPUUtil        *string            `json:"gpu_util"`         // the monitor's: supported, unsupported (A100 MIG), error
	GPUUtilPct     *float64           `json:"gpu_util_pct"`     // mean: the monitor's, else sacct's gres/gpuutil
	GPUMemUtilPct  *float64           `json:"gpu_mem_util_pct"` // mean memory (DRAM) utilization: the monitor's
	OOM            *string            `json:"oom"`
	OOMMessage     *string            `json:"oom_message"`
	GPUNeedMiB     *float64           `json:"gpu_need_mib"` // lower bound from a GPU OOM message
	TimeLimitHit   bool               `json:"time_limit_hit"`
	Work           *float64           `json:"work"`
	WorkUnit       *string            `json:"work_unit"`
	Metrics        map[string]float64 `json:"metrics"`
	SU             *float64           `json:"su"`
	Script         *string            `json:"script"`
	Fingerprint    *string            `json:"fingerprint"`
	Workload       *string            `json:"workload"`
	Output         *string            `json:"output"`
	Placeholder    bool               `json:"placeholder"` // slurmdbd's stub record, not final
	Earlier        bool               `json:"earlier"`     // a job of an earlier version of JOB.sh
	History        string             `json:"history"`     // own, or site (the site-wide history)
	// Emulated are the runs of the emulation the job ran (migadvisor
	// emulate), in its order; omitted for a job that ran none.
	Emulated []EmulatedEntry `json:"emulated,omitempty"`
}

// EmulatedEntry is one emulated run of a job as history lists it.
type EmulatedEntry struct {
	Profile    string   `json:"profile"`
	GPU        *string  `json:"gpu"`       // the GPU that ran it
	SMPct      int      `json:"sm_pct"`    // MPS active-thread percentage, 100 with no limit
	MemLimit   *string  `json:"mem_limit"` // CUDA_MPS_PINNED_DEVICE_MEM_LIMIT; null: no cap
	Outcome    string   `json:"outcome"`   // completed, failed, budget
	ExitStatus int      `json:"exit_status"`
	Seconds    float64  `json:"seconds"`
	GPUPeakMiB *float64 `json:"gpu_peak_mib"` // the run's own peak, from the monitor
	OOM        *string  `json:"oom"`          // gpu: out of memory under the cap
	// The share of the whole GPU's SMs (at the run's clock) and copy
	// bandwidth the run had, measured; null: not measured.
	SMShare        *float64 `json:"sm_share"`
	BandwidthShare *float64 `json:"bandwidth_share"`
}

// shareOrNull is a measured share to three places, nil when unknown.
func shareOrNull(v float64) *float64 {
	if v <= 0 {
		return nil
	}
	r := math.Round(v*1000) / 1000
	return &r
}

// EntryOf is a history record as history lists it.
func EntryOf(hr *advisor.HistoryRecord, site *catalog.Site) JobEntry {
	r := &hr.JobRecord
	h := JobEntry{JobID: r.JobID, JobKey: r.Key, Cluster: r.Cluster, Name: r.Name, User: r.User, Partition: r.Partition,
		QoS: r.QOS, Profile: strPtr(r.Profile), RequestedProfile: strPtr(r.RequestedProfile), GPUType: r.GPUType, GPUCount: r.GPUCount,
		State: r.State, ExitCode: r.ExitCode, ExitSignal: r.ExitSignal, Submit: r.Submit, Start: r.Start, End: r.End,
		ElapsedS: r.ElapsedS, TimeLimitMin: r.TimeLimitMin, CPUs: r.CPUs, ReqMemMiB: roundPtr(r.ReqMemMiB),
		MaxRSSMiB: roundPtr(r.MaxRSSMiB), GPUMemPeakMiB: roundPtr(r.GPUMemPeakMiB()), OOM: strPtr(r.OOM()),
		GPUNeedMiB: roundPtr(r.GPUNeedMiB), TimeLimitHit: r.ReachedTimeLimit(), Work: r.Work,
		WorkUnit: strPtr(r.WorkUnit), Metrics: r.Metrics, SU: jobSU(r, site), Script: strPtr(r.Script),
		Fingerprint: strPtr(r.Fingerprint), Workload: strPtr(r.Workload), Output: strPtr(r.OutputPath), Placeholder: r.Stub}
	h.Earlier, h.History = r.Earlier, "own"
	if hr.SiteWide {
		h.History = "site"
	}
	h.GPUMemSource, h.GPUMemTotalMiB = strPtr(r.GPUMemSource()), roundPtr(r.MonitorTotalMiB)
	if h.GPUMemTotalMiB == nil && r.GPUMemSource() == history.PeakJobstats {
		h.GPUMemTotalMiB = roundPtr(r.JobstatsTotalMiB)
	}
	h.GPUMemPeaks = r.GPUMemPeaks()
	if held := memory.HolderOfRecord(r); held.Kind != memory.HolderUnknown {
		h.GPUMemHeldBy = &held
	}
	if v, ok := r.Metrics[slurm.AllocatedMetric]; ok && v > 0 {
		h.GPUMemPeaks["framework"] = v // what the job's framework allocated at most (MIGADVISOR_METRIC)
	}
	for source, v := range h.GPUMemPeaks {
		h.GPUMemPeaks[source] = math.Round(v*10) / 10 // as roundPtr
	}
	h.GPUUtil, h.GPUUtilPct = strPtr(r.MonitorUtil), roundPtr(r.GPUUtilizationPct())
	h.GPUMemUtilPct = roundPtr(r.GPUMemUtilizationPct())
	for i := range r.Emulated {
		e := &r.Emulated[i]
		h.Emulated = append(h.Emulated, EmulatedEntry{Profile: e.Profile, GPU: strPtr(e.GPU), SMPct: e.Percentage,
			MemLimit: strPtr(e.MemLimit), Outcome: e.Outcome, ExitStatus: e.ExitStatus, Seconds: e.Seconds,
			GPUPeakMiB: roundPtr(e.PeakMiB()), OOM: strPtr(e.OOM()), SMShare: shareOrNull(e.SMShare),
			BandwidthShare: shareOrNull(e.BandwidthShare)})
	}
	switch {
	case r.GPUOOMText != "":
		h.OOMMessage = &r.GPUOOMText
	case r.HostOOMText != "":
		h.OOMMessage = &r.HostOOMText
	}
	return h
}

// jobSU is the job's price (RecordCharge), rounded as the text
// and recommend print it; nil where there is no honest figure.
func jobSU(r *history.JobRecord, site *catalog.Site) *float64 {
	ch, ok := advisor.RecordCharge(site, r)
	if !ok {
		return nil
	}
	su := catalog.RoundSU(ch.SU)
	return &su
}

// strPtr is s, or nil when empty: null in JSON.
func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// roundPtr is a figure to one decimal, or nil.
func roundPtr(f *float64) *float64 {
	if f == nil {
		return nil
	}
	r := math.Round(*f*10) / 10
	return &r
}
