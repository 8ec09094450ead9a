package gpu

import (
	"errors"
	"fmt"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/migadvisor/migadvisor/slurm"
)

// ProcessTree says whether a PID reported by the driver belongs to the
// monitored command.
type ProcessTree interface {
	// Owns reports whether pid is the command or one of its descendants;
	// visible is false when pid is not a process of this PID namespace
	// (a driver outside a container reports host PIDs).
	Owns(pid uint32) (owned, visible bool)
}

// Utilization states. On A100 and A30 MIG devices NVML cannot attribute
// utilization, so it is recorded as unsupported, never as 0.
const (
	UtilSupported   = "supported"
	UtilUnsupported = "unsupported"
	UtilError       = "error"
)

// Process scopes: which processes the peak process memory counts.
const (
	ScopeTree   = "tree"          // the command's own process tree
	ScopeDevice = "device"        // every process on the device: the driver's PIDs are not ours to match
	ScopeNone   = slurm.ScopeNone // the driver reported no process, or cannot
)

// DeviceStats is what sampling one device found.
type DeviceStats struct {
	Device
	Samples        int        `json:"samples"`
	PeakUsedMiB    float64    `json:"peak_used_mib"`
	PeakUsedAt     *time.Time `json:"peak_used_at,omitempty"`
	PeakProcessMiB *float64   `json:"peak_process_mib"` // nil: no process memory was reported
	PeakProcessAt  *time.Time `json:"peak_process_at,omitempty"`
	ProcessScope   string     `json:"process_scope"`
	Processes      int        `json:"processes_max"` // most of the command's processes seen at once
	Utilization    string     `json:"utilization"`
	UtilGPUMean    *float64   `json:"util_gpu_mean_pct,omitempty"`
	UtilGPUMax     *float64   `json:"util_gpu_max_pct,omitempty"`
	UtilMemMean    *float64   `json:"util_mem_mean_pct,omitempty"`
	UtilMemMax     *float64   `json:"util_mem_max_pct,omitempty"`
	// SMClockMean is the mean SM clock over the samples that found the GPU
	// busy: under its power limit a GPU clocks all its SMs lower than a few
	// (an emulated slice runs faster per SM than the whole GPU does).
	SMClockMean *float64 `json:"sm_clock_mean_mhz,omitempty"`
	Notes       []string `json:"notes,omitempty"`

	utilN          int
	gpuSum, memSum float64
	clockN         int
	clockSum       float64
	noClock        bool // the clock cannot be read: stop asking
	noProcesses    bool // the process query failed: stop asking
	sawTree        bool
}

// PeakMiB is the best figure of the job's own GPU memory: the peak of its
// processes where the driver reported them, else the device's peak use
// (the job-output protocol's rule, which collect reads back).
func (s *DeviceStats) PeakMiB() float64 {
	return slurm.JobPeakMiB(s.PeakProcessMiB, s.ProcessScope, s.PeakUsedMiB)
}

// Sampler reads memory, processes and utilization of a set of devices.
type Sampler struct {
	Tree     ProcessTree
	MemoryV2 bool // use nvmlDeviceGetMemoryInfo_v2: "used" without the driver's reserve
	Stats    []*DeviceStats
}

// ErrSampling wraps an NVML error that ends sampling.
var ErrSampling = errors.New("NVML sampling failed")

// NewSampler prepares to sample devs. lib is asked whether the driver has
// the v2 memory call, which older drivers lack.
func NewSampler(lib nvml.Interface, devs []Device, tree ProcessTree) *Sampler {
	s := &Sampler{Tree: tree, MemoryV2: hasSymbol(lib, "nvmlDeviceGetMemoryInfo_v2")}
	for _, d := range devs {
		s.Stats = append(s.Stats, &DeviceStats{Device: d, ProcessScope: ScopeNone, Utilization: UtilSupported})
	}
	return s
}

func hasSymbol(lib nvml.Interface, name string) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return lib.Extensions().LookupSymbol(name) == nil
}

// Sample reads every device once. An error means sampling must stop (the
// device is gone, the driver failed); what was gathered so far stays valid.
func (s *Sampler) Sample(now time.Time) (err error) {
	defer func() {
		// go-nvml panics on a symbol the driver lacks; the job must not notice.
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrSampling, r)
		}
	}()
	for _, st := range s.Stats {
		if err := s.sampleDevice(st, now); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrSampling, st.Label(), err)
		}
	}
	return nil
}

func (s *Sampler) sampleDevice(st *DeviceStats, now time.Time) error {
	used, total, ret := s.memory(st.Handle)
	if ret != nvml.SUCCESS {
		return errors.New(nvml.ErrorString(ret))
	}
	st.Samples++
	if total > 0 {
		st.TotalMiB = total
	}
	if used > st.PeakUsedMiB || st.PeakUsedAt == nil {
		st.PeakUsedMiB, st.PeakUsedAt = used, &now
	}
	s.sampleProcesses(st, now)
	sampleUtilization(st)
	return nil
}

func (s *Sampler) memory(h nvml.Device) (used, total float64, ret nvml.Return) {
	if s.MemoryV2 {
		if m, ret := h.GetMemoryInfo_v2(); ret == nvml.SUCCESS {
			return mib(m.Used), mib(m.Total), ret
		}
	}
	m, ret := h.GetMemoryInfo()
	return mib(m.Used), mib(m.Total), ret
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// sampleProcesses sums the memory of the command's processes on the device.
// When none of the reported PIDs is visible here (a PID namespace), every
// process on the device is counted and the scope says so.
func (s *Sampler) sampleProcesses(st *DeviceStats, now time.Time) {
	if st.noProcesses {
		return
	}
	procs, ret := st.Handle.GetComputeRunningProcesses()
	if ret != nvml.SUCCESS {
		st.noProcesses = true
		st.Notes = append(st.Notes, "process memory unavailable: "+nvml.ErrorString(ret))
		return
	}
	var ours, foreign float64
	var nOurs, nForeign int
	for _, p := range procs {
		if p.UsedGpuMemory == ^uint64(0) { // NVML_VALUE_NOT_AVAILABLE
			continue
		}
		owned, visible := true, true
		if s.Tree != nil {
			owned, visible = s.Tree.Owns(p.Pid)
		}
		switch {
		case owned:
			ours += mib(p.UsedGpuMemory)
			nOurs++
		case !visible:
			foreign += mib(p.UsedGpuMemory)
			nForeign++
		}
	}
	scope, sum, n := ScopeTree, ours, nOurs
	if nOurs == 0 {
		if nForeign == 0 || st.sawTree {
			return
		}
		scope, sum, n = ScopeDevice, foreign, nForeign
	} else {
		st.sawTree = true
	}
	if st.ProcessScope != ScopeTree {
		st.ProcessScope = scope
	}
	st.Processes = max(st.Processes, n)
	if st.PeakProcessMiB == nil || sum > *st.PeakProcessMiB {
		v := sum
		st.PeakProcessMiB, st.PeakProcessAt = &v, &now
	}
}

// sampleUtilization adds one utilization reading where the device has them.
func sampleUtilization(st *DeviceStats) {
	if st.Utilization != UtilSupported {
		return
	}
	u, ret := st.Handle.GetUtilizationRates()
	switch ret {
	case nvml.SUCCESS:
	case nvml.ERROR_NOT_SUPPORTED:
		st.Utilization = UtilUnsupported
		return
	default:
		st.Utilization = UtilError
		st.Notes = append(st.Notes, "utilization unavailable: "+nvml.ErrorString(ret))
		return
	}
	st.utilN++
	st.gpuSum += float64(u.Gpu)
	st.memSum += float64(u.Memory)
	mean := func(sum float64) *float64 { v := sum / float64(st.utilN); return &v }
	st.UtilGPUMean, st.UtilMemMean = mean(st.gpuSum), mean(st.memSum)
	st.UtilGPUMax = maxPtr(st.UtilGPUMax, float64(u.Gpu))
	st.UtilMemMax = maxPtr(st.UtilMemMax, float64(u.Memory))
	if u.Gpu > 0 {
		sampleClock(st)
	}
}

// sampleClock adds one SM clock reading; a device that has none (or a
// driver without the call) is not asked again, and sampling goes on.
func sampleClock(st *DeviceStats) {
	if st.noClock {
		return
	}
	defer func() {
		if recover() != nil {
			st.noClock = true
		}
	}()
	mhz, ret := st.Handle.GetClockInfo(nvml.CLOCK_SM)
	if ret != nvml.SUCCESS || mhz == 0 {
		st.noClock = true
		return
	}
	st.clockN++
	st.clockSum += float64(mhz)
	v := st.clockSum / float64(st.clockN)
	st.SMClockMean = &v
}

func maxPtr(p *float64, v float64) *float64 {
	if p == nil || v > *p {
		return &v
	}
	return p
}
