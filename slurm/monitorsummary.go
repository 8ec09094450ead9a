package slurm

import (
	"os"
	"strings"

	"github.com/migadvisor/migadvisor/internal/versioned"
)

// The monitor's summary file (migadvisor-<jobkey>.json, beside the job's
// output) is part of the job-output protocol, with the MIGADVISOR_GPU
// lines: the monitor (bench/monitor) writes it, collect reads it. Its
// figures are those of the lines; the file is there even when stderr went
// elsewhere.

// SummaryVersion is the version of the summary file this build writes and reads.
const SummaryVersion = 1

// SummaryName is the file name of a job's summary, beside its output.
func SummaryName(jobKey string) string { return "migadvisor-" + jobKey + ".json" }

// MonitorSummary is what a reader takes from a summary file: its version
// and, per device, the figures of a MIGADVISOR_GPU line.
type MonitorSummary struct {
	Version int             `json:"version"`
	Devices []MonitorDevice `json:"devices"`
}

// MonitorDevice is one device of a summary, as the monitor's sampler
// (bench/gpu.DeviceStats) writes it.
type MonitorDevice struct {
	Name           string   `json:"name"`
	MIG            bool     `json:"mig"`
	Profile        string   `json:"profile,omitempty"`
	TotalMiB       float64  `json:"memory_total_mib"`
	Samples        int      `json:"samples"`
	PeakUsedMiB    float64  `json:"peak_used_mib"`
	PeakProcessMiB *float64 `json:"peak_process_mib"`
	ProcessScope   string   `json:"process_scope"`
	Utilization    string   `json:"utilization"`
	UtilGPUMean    *float64 `json:"util_gpu_mean_pct,omitempty"`
	UtilGPUMax     *float64 `json:"util_gpu_max_pct,omitempty"`
	UtilMemMean    *float64 `json:"util_mem_mean_pct,omitempty"` // memory (DRAM) utilization: the share of time memory was read or written
	UtilMemMax     *float64 `json:"util_mem_max_pct,omitempty"`
	SMClockMean    *float64 `json:"sm_clock_mean_mhz,omitempty"` // while the GPU was busy
}

// ScopeNone is the process scope of a device whose driver reported no
// process of the job: its device-wide use is the job's figure.
const ScopeNone = "none"

// PeakMiB is the job's own GPU memory on the device (JobPeakMiB).
func (d *MonitorDevice) PeakMiB() float64 {
	return JobPeakMiB(d.PeakProcessMiB, d.ProcessScope, d.PeakUsedMiB)
}

// JobPeakMiB is the protocol's figure of a job's own GPU memory on a
// device, the one rule its writer and its readers share: the peak of the
// job's processes where the driver reported them (processMiB, in a scope
// other than ScopeNone), else the device's peak use.
func JobPeakMiB(processMiB *float64, scope string, usedMiB float64) float64 {
	if processMiB != nil && scope != ScopeNone {
		return *processMiB
	}
	return usedMiB
}

// Label names the device in one line: "NVIDIA A100-SXM4-80GB MIG 1g.10gb".
func (d *MonitorDevice) Label() string { return DeviceLabel(d.Name, d.MIG, d.Profile) }

// DeviceLabel names a device by its name, which for a MIG device usually
// ends in its profile already.
func DeviceLabel(name string, mig bool, profile string) string {
	if mig && profile != "" && !strings.Contains(name, profile) {
		return name + " MIG " + profile
	}
	return name
}

// Peak is the device with the largest peak of the job's memory, or nil when
// nothing was sampled.
func (s *MonitorSummary) Peak() (float64, *MonitorDevice) {
	peak, dev := -1.0, (*MonitorDevice)(nil)
	for i := range s.Devices {
		if d := &s.Devices[i]; d.Samples > 0 && d.PeakMiB() > peak {
			peak, dev = d.PeakMiB(), d
		}
	}
	return peak, dev
}

// ReadMonitorSummary reads a summary file, refusing versions this build
// does not know.
func ReadMonitorSummary(path string) (*MonitorSummary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseMonitorSummary(path, data)
}

// FirstMonitorDevice is the first device of the summary file at path
// (a job's own GPU); false when the file cannot be read or names none.
func FirstMonitorDevice(path string) (*MonitorDevice, bool) {
	sum, err := ReadMonitorSummary(path)
	if err != nil || len(sum.Devices) == 0 {
		return nil, false
	}
	return &sum.Devices[0], true
}

// ParseMonitorSummary reads the summary file at path from its bytes,
// refusing versions this build does not know.
func ParseMonitorSummary(path string, data []byte) (*MonitorSummary, error) {
	var s MonitorSummary
	if err := versioned.DecodeJSON(path, data, "monitor summary", SummaryVersion, &s); err != nil {
		return nil, err
	}
	return &s, nil
}
