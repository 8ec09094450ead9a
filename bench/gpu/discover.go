// Package gpu reads GPUs through NVML (go-nvml). The driver library is loaded
// at run time, so the binary builds and runs on machines without a GPU.
package gpu

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/migadvisor/migadvisor/catalog"
)

// ErrNoNVML means the NVIDIA driver library cannot be used on this machine.
var ErrNoNVML = errors.New("NVML is not available")

// Discoverer reads MIG GPU-instance profiles from NVML.
type Discoverer struct {
	Lib nvml.Interface
	// DriverNames asks the driver for profile names (GetGpuInstanceProfileInfoV);
	// the mocks in go-nvml do not implement it, so tests leave it off.
	DriverNames bool
}

// NewDiscoverer uses the system's libnvidia-ml.so.1.
func NewDiscoverer() *Discoverer {
	return &Discoverer{Lib: nvml.New(), DriverNames: true}
}

// Discover lists every GPU with the GPU-instance profiles it supports.
// GetGpuInstanceProfileInfo answers even while MIG mode is disabled.
func (d *Discoverer) Discover() (gpus []catalog.DiscoveredGPU, err error) {
	defer func() {
		// go-nvml panics when a symbol is missing from an old driver library.
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrNoNVML, r)
		}
	}()
	if ret := d.Lib.Init(); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("%w: %s (run this on a node with an NVIDIA GPU and driver)", ErrNoNVML, nvml.ErrorString(ret))
	}
	defer d.Lib.Shutdown()
	count, ret := d.Lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("count GPUs: %s", nvml.ErrorString(ret))
	}
	if count == 0 {
		return nil, fmt.Errorf("%w: the driver reports no GPU", ErrNoNVML)
	}
	for i := 0; i < count; i++ {
		g, err := d.device(i)
		if err != nil {
			return nil, err
		}
		gpus = append(gpus, g)
	}
	return gpus, nil
}

func (d *Discoverer) device(i int) (catalog.DiscoveredGPU, error) {
	dev, ret := d.Lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return catalog.DiscoveredGPU{}, fmt.Errorf("GPU %d: %s", i, nvml.ErrorString(ret))
	}
	g := catalog.DiscoveredGPU{Index: i}
	g.Name, _ = dev.GetName()
	g.UUID, _ = dev.GetUUID()
	if mem, ret := dev.GetMemoryInfo(); ret == nvml.SUCCESS {
		g.MemoryMiB = mem.Total / (1 << 20)
	}
	if cur, _, ret := dev.GetMigMode(); ret == nvml.SUCCESS {
		g.MIGEnabled = cur == nvml.DEVICE_MIG_ENABLE
	}
	model, known := catalog.LookupModel(g.Name)
	if known {
		g.Model = model.Name
	}
	type offered struct {
		enum int // NVML's GPU_INSTANCE_PROFILE_* value
		info nvml.GpuInstanceProfileInfo
	}
	var largest uint64
	var profiles []offered
	for p := 0; p < nvml.GPU_INSTANCE_PROFILE_COUNT; p++ {
		info, ret := dev.GetGpuInstanceProfileInfo(p)
		if ret != nvml.SUCCESS {
			continue // this GPU does not offer the profile
		}
		profiles = append(profiles, offered{p, info})
		largest = max(largest, info.MemorySizeMB)
	}
	nominal := catalog.NominalTotalGB(g)
	for _, op := range profiles {
		info := op.info
		name, memSlices := catalog.NameProfile(info.SliceCount, info.MemorySizeMB, largest, nominal)
		if known {
			name = modelProfileName(model, info, name)
		}
		if d.DriverNames {
			if n := driverName(dev, op.enum); n != "" {
				name = n
			}
		}
		g.Profiles = append(g.Profiles, catalog.DiscoveredProfile{
			Name: name, ID: info.Id, Slices: info.SliceCount, MaxInstances: info.InstanceCount,
			SMs: info.MultiprocessorCount, MemoryMiB: info.MemorySizeMB, MemorySlices: memSlices, MemorySlicesN: 8,
		})
	}
	return g, nil
}

// modelProfileName picks the built-in profile with the same compute slices
// and the nearest memory, keeping the derived name when none is close.
func modelProfileName(m *catalog.GPUModel, info nvml.GpuInstanceProfileInfo, derived string) string {
	best, bestDiff := derived, math.Inf(1)
	for _, p := range m.Profiles {
		diff := math.Abs(p.Memory.MiB() - float64(info.MemorySizeMB))
		if uint32(p.ComputeSlices) == info.SliceCount && !strings.Contains(p.Name, "+") && diff < bestDiff && diff < 0.05*p.Memory.MiB() {
			best, bestDiff = p.Name, diff
		}
	}
	return best
}

// driverName asks the driver for the profile's own name ("MIG 1g.10gb").
func driverName(dev nvml.Device, profile int) string {
	info, ret := dev.GetGpuInstanceProfileInfoV(profile).V2()
	if ret != nvml.SUCCESS {
		return ""
	}
	raw := string(info.Name[:])
	if i := strings.IndexByte(raw, 0); i >= 0 {
		raw = raw[:i]
	}
	return strings.TrimPrefix(strings.TrimSpace(raw), "MIG ")
}
