package monitor

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/bench/gpu"
	"github.com/migadvisor/migadvisor/internal/atomicfile"
	"github.com/migadvisor/migadvisor/slurm"
)

// SummaryVersion is the version of the summary file this build writes and
// reads: the job-output protocol's (slurm), which collect reads.
const SummaryVersion = slurm.SummaryVersion

// Summary is the monitor's record of one run of a command (migadvisor-<jobid>.json).
type Summary struct {
	Version    int                `json:"version"`
	JobID      string             `json:"job_id,omitempty"`
	Host       string             `json:"host,omitempty"`
	Command    []string           `json:"command"`
	Started    time.Time          `json:"started"`
	Ended      time.Time          `json:"ended"`
	IntervalMS int64              `json:"interval_ms"`
	Samples    int                `json:"samples"`
	ExitStatus int                `json:"exit_status"`
	NVML       string             `json:"nvml"` // "ok", "unavailable: …" or "stopped: …"
	Devices    []*gpu.DeviceStats `json:"devices"`
	Notes      []string           `json:"notes,omitempty"`
	Overhead   *Overhead          `json:"monitor_overhead,omitempty"`
}

// Overhead is what the monitor itself cost the job (not counting the command).
type Overhead struct {
	CPUSeconds float64 `json:"cpu_s"`
	CPUPercent float64 `json:"cpu_pct_of_one_core"`
	MaxRSSMiB  float64 `json:"max_rss_mib"`
}

// PeakMiB is the largest per-device peak of the job's own GPU memory, or -1
// when nothing was measured.
func (s *Summary) PeakMiB() (peak float64, dev *gpu.DeviceStats) {
	peak = -1
	for _, d := range s.Devices {
		if d.Samples > 0 && d.PeakMiB() > peak {
			peak, dev = d.PeakMiB(), d
		}
	}
	return peak, dev
}

// Lines are the stderr lines, one per sampled device, e.g.
// "MIGADVISOR_GPU peak_mib=5812 used_peak_mib=5890 total_mib=9728 samples=120 scope=tree util=unsupported profile=1g.10gb device=NVIDIA A100-SXM4-80GB MIG 1g.10gb"
// on an A100 MIG slice, or, where the device reports utilization,
// "... util=mean:43,max:98 mem_util=mean:21,max:60 device=NVIDIA H100 80GB HBM3":
// mem_util, the share of time device memory was read or written, only
// when both its figures are known. The device comes last because its name
// has spaces.
func (s *Summary) Lines() []string {
	var out []string
	for _, d := range s.Devices {
		if d.Samples == 0 {
			continue
		}
		fields := []string{slurm.MonitorLinePrefix, "peak_mib=" + mibText(d.PeakMiB()), "used_peak_mib=" + mibText(d.PeakUsedMiB),
			"total_mib=" + mibText(d.TotalMiB), "samples=" + strconv.Itoa(d.Samples), "scope=" + d.ProcessScope}
		util := d.Utilization
		if d.UtilGPUMean != nil && d.UtilGPUMax != nil {
			util = fmt.Sprintf("mean:%.0f,max:%.0f", *d.UtilGPUMean, *d.UtilGPUMax)
		}
		fields = append(fields, "util="+util)
		if d.UtilMemMean != nil && d.UtilMemMax != nil {
			fields = append(fields, fmt.Sprintf("mem_util=mean:%.0f,max:%.0f", *d.UtilMemMean, *d.UtilMemMax))
		}
		if d.Profile != "" {
			fields = append(fields, "profile="+d.Profile)
		}
		out = append(out, strings.Join(append(fields, "device="+d.Label()), " "))
	}
	return out
}

func mibText(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

// Write writes the summary as JSON, whole or not at all.
func (s *Summary) Write(path string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'), 0o644)
}

// ReadSummary reads a summary file, refusing versions this build does not know.
func ReadSummary(path string) (*Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// The protocol's reader checks the shape and the version; this one
	// keeps every field the monitor wrote.
	if _, err := slurm.ParseMonitorSummary(path, data); err != nil {
		return nil, err
	}
	var s Summary
	return &s, json.Unmarshal(data, &s)
}

// SummaryName is the file name of a job's summary, beside its output.
func SummaryName(jobKey string) string { return slurm.SummaryName(jobKey) }
