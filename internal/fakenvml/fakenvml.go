// Package fakenvml is an NVML for unit tests: GPUs, MIG devices, processes
// and failures that a test sets and changes while code under test samples.
// It builds on go-nvml's moq mocks; a call it does not set up panics, as a
// missing driver symbol does in go-nvml, so callers' recovery is tested too.
package fakenvml

import (
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

const mib = 1 << 20

// Device is a GPU, or a MIG device of one.
type Device struct {
	Name     string
	UUID     string
	TotalMiB uint64
	MIG      []*Device // MIG devices: the GPU has MIG enabled
	GI, CI   int       // on a MIG device
	ClockMHz uint32    // the SM clock; 0: NOT_SUPPORTED

	mu       sync.Mutex
	used     uint64
	procs    []nvml.ProcessInfo
	util     *nvml.Utilization // nil: NOT_SUPPORTED, as on A100 MIG
	memErr   nvml.Return
	block    <-chan struct{}
	procsErr nvml.Return
}

// Server is the fake library.
type Server struct {
	GPUs    []*Device
	InitRet nvml.Return
	NoV2    bool // the driver lacks nvmlDeviceGetMemoryInfo_v2
}

// SetUsed sets the memory in use, in MiB.
func (d *Device) SetUsed(usedMiB uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.used = usedMiB * mib
}

// SetProcesses sets the compute processes: pid -> MiB.
func (d *Device) SetProcesses(procs map[uint32]uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.procs = d.procs[:0]
	for pid, m := range procs {
		d.procs = append(d.procs, nvml.ProcessInfo{Pid: pid, UsedGpuMemory: m * mib, GpuInstanceId: uint32(d.GI), ComputeInstanceId: uint32(d.CI)})
	}
}

// SetUtilization makes utilization supported, with these percentages.
func (d *Device) SetUtilization(gpu, mem uint32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.util = &nvml.Utilization{Gpu: gpu, Memory: mem}
}

// FailMemory makes memory queries fail with ret (SUCCESS heals).
func (d *Device) FailMemory(ret nvml.Return) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.memErr = ret
}

// BlockMemory makes memory queries hang until ch is closed, as a wedged
// driver does.
func (d *Device) BlockMemory(ch <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.block = ch
}

// FailProcesses makes process queries fail with ret.
func (d *Device) FailProcesses(ret nvml.Return) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.procsErr = ret
}

// Lib returns the nvml.Interface of the server.
func (s *Server) Lib() nvml.Interface {
	handles := make([]*mock.Device, len(s.GPUs))
	for i, g := range s.GPUs {
		handles[i] = g.handle(nil)
	}
	return &mock.Interface{
		InitFunc:     func() nvml.Return { return s.InitRet },
		ShutdownFunc: func() nvml.Return { return nvml.SUCCESS },
		ExtensionsFunc: func() nvml.ExtendedInterface {
			return &mock.ExtendedInterface{LookupSymbolFunc: func(name string) error {
				if s.NoV2 && name == "nvmlDeviceGetMemoryInfo_v2" {
					return nvml.ERROR_FUNCTION_NOT_FOUND
				}
				return nil
			}}
		},
		DeviceGetCountFunc: func() (int, nvml.Return) { return len(handles), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if i < 0 || i >= len(handles) {
				return nil, nvml.ERROR_INVALID_ARGUMENT
			}
			return handles[i], nvml.SUCCESS
		},
	}
}

func (d *Device) handle(parent *Device) *mock.Device {
	h := &mock.Device{
		GetNameFunc: func() (string, nvml.Return) { return d.Name, nvml.SUCCESS },
		GetUUIDFunc: func() (string, nvml.Return) { return d.UUID, nvml.SUCCESS },
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			used, total, ret := d.memory()
			return nvml.Memory{Total: total, Used: used, Free: total - used}, ret
		},
		GetMemoryInfo_v2Func: func() (nvml.Memory_v2, nvml.Return) {
			used, total, ret := d.memory()
			return nvml.Memory_v2{Total: total, Used: used, Free: total - used}, ret
		},
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.procsErr != nvml.SUCCESS {
				return nil, d.procsErr
			}
			return append([]nvml.ProcessInfo(nil), d.procs...), nvml.SUCCESS
		},
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.util == nil || parent != nil || len(d.MIG) > 0 {
				return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
			}
			return *d.util, nvml.SUCCESS
		},
		GetClockInfoFunc: func(nvml.ClockType) (uint32, nvml.Return) {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.ClockMHz == 0 {
				return 0, nvml.ERROR_NOT_SUPPORTED
			}
			return d.ClockMHz, nvml.SUCCESS
		},
	}
	if parent != nil {
		h.GetGpuInstanceIdFunc = func() (int, nvml.Return) { return d.GI, nvml.SUCCESS }
		h.GetComputeInstanceIdFunc = func() (int, nvml.Return) { return d.CI, nvml.SUCCESS }
		return h
	}
	mode := nvml.DEVICE_MIG_DISABLE
	if len(d.MIG) > 0 {
		mode = nvml.DEVICE_MIG_ENABLE
	}
	h.GetMigModeFunc = func() (int, int, nvml.Return) { return mode, mode, nvml.SUCCESS }
	migs := make([]*mock.Device, len(d.MIG))
	for i, m := range d.MIG {
		migs[i] = m.handle(d)
	}
	h.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
	h.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i < len(migs) {
			return migs[i], nvml.SUCCESS
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	return h
}

func (d *Device) memory() (used, total uint64, ret nvml.Return) {
	d.mu.Lock()
	block := d.block
	d.mu.Unlock()
	if block != nil {
		<-block
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.used, d.TotalMiB * mib, d.memErr
}
