package gpu

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/migadvisor/migadvisor/slurm"
)

// Device is one GPU or MIG device that a job's CUDA programs can see, with the
// NVML handle that reads it. On a MIG device the handle is the MIG device's
// own, so memory figures are the slice's, not the whole GPU's.
type Device struct {
	Handle     nvml.Device `json:"-"`
	Visible    string      `json:"visible"` // the CUDA_VISIBLE_DEVICES entry that named it, or its CUDA index
	Index      int         `json:"index"`   // NVML index of the physical GPU
	UUID       string      `json:"uuid"`
	Name       string      `json:"name"`
	MIG        bool        `json:"mig"`
	Profile    string      `json:"profile,omitempty"` // MIG profile, e.g. 1g.10gb
	ParentUUID string      `json:"parent_uuid,omitempty"`
	GPUInst    int         `json:"gpu_instance,omitempty"`
	CompInst   int         `json:"compute_instance,omitempty"`
	TotalMiB   float64     `json:"memory_total_mib"`
}

// Label names the device in one line: its name, which for a MIG device
// already ends in the profile ("NVIDIA A100-SXM4-80GB MIG 1g.10gb").
func (d *Device) Label() string { return slurm.DeviceLabel(d.Name, d.MIG, d.Profile) }

// Enumerate lists the devices CUDA would enumerate, in CUDA's order: each GPU
// in NVML order, or, where MIG is enabled, each of its MIG devices. A GPU
// whose handle cannot be read (another job's, behind the cgroup) is skipped.
func Enumerate(lib nvml.Interface) ([]Device, error) {
	count, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("count GPUs: %s", nvml.ErrorString(ret))
	}
	var out []Device
	for i := 0; i < count; i++ {
		dev, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		gpu := describe(dev, i)
		if cur, _, ret := dev.GetMigMode(); ret == nvml.SUCCESS && cur == nvml.DEVICE_MIG_ENABLE {
			out = append(out, migDevices(dev, gpu)...)
			continue
		}
		out = append(out, gpu)
	}
	return out, nil
}

func describe(dev nvml.Device, index int) Device {
	d := Device{Handle: dev, Index: index}
	d.Name, _ = dev.GetName()
	d.UUID, _ = dev.GetUUID()
	if mem, ret := dev.GetMemoryInfo(); ret == nvml.SUCCESS {
		d.TotalMiB = float64(mem.Total) / (1 << 20)
	}
	return d
}

// migDevices lists the MIG devices of a MIG-enabled GPU.
func migDevices(parent nvml.Device, gpu Device) []Device {
	n, ret := parent.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return nil
	}
	var out []Device
	for m := 0; m < n; m++ {
		h, ret := parent.GetMigDeviceHandleByIndex(m)
		if ret != nvml.SUCCESS {
			continue // NOT_FOUND: no MIG device at this index
		}
		d := describe(h, gpu.Index)
		d.MIG, d.ParentUUID = true, gpu.UUID
		d.GPUInst, _ = h.GetGpuInstanceId()
		d.CompInst, _ = h.GetComputeInstanceId()
		d.Profile = migProfile(h, d.Name)
		out = append(out, d)
	}
	return out
}

// migProfile reads the profile from the MIG device's name ("… MIG 1g.10gb"),
// else derives it from its slices and memory.
func migProfile(h nvml.Device, name string) string {
	if i := strings.LastIndex(name, "MIG "); i >= 0 {
		return strings.TrimSpace(name[i+len("MIG "):])
	}
	attr, ret := h.GetAttributes()
	if ret != nvml.SUCCESS || attr.GpuInstanceSliceCount == 0 {
		return ""
	}
	return fmt.Sprintf("%dg.%dgb", attr.GpuInstanceSliceCount, int(math.Round(float64(attr.MemorySizeMB)/1000)))
}

// Resolve picks the devices named by CUDA_VISIBLE_DEVICES from those CUDA
// would enumerate, as CUDA reads the variable: unset means all; entries are
// indices, GPU-/MIG- UUIDs or their unique prefixes, or the old
// MIG-GPU-<uuid>/<gi>/<ci> form; the list ends at the first entry that names
// no device. The returned notes say what was ignored.
func Resolve(all []Device, visible string, set bool) (picked []Device, notes []string) {
	if !set {
		for i, d := range all {
			d.Visible = strconv.Itoa(i)
			picked = append(picked, d)
		}
		return picked, nil
	}
	seen := map[int]bool{}
	for _, entry := range strings.Split(visible, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			break
		}
		matched, why := match(all, entry)
		if len(matched) == 0 {
			notes = append(notes, fmt.Sprintf("CUDA_VISIBLE_DEVICES entry %q %s; CUDA ignores it and the entries after it", entry, why))
			break
		}
		for _, i := range matched {
			if !seen[i] {
				seen[i] = true
				d := all[i]
				d.Visible = entry
				picked = append(picked, d)
			}
		}
	}
	return picked, notes
}

// match returns the indices in all that entry names, or why it names none.
func match(all []Device, entry string) ([]int, string) {
	if n, err := strconv.Atoi(entry); err == nil {
		if n < 0 || n >= len(all) {
			return nil, fmt.Sprintf("is out of range (%d devices)", len(all))
		}
		return []int{n}, ""
	}
	upper := strings.ToUpper(entry)
	if strings.HasPrefix(upper, "MIG-GPU-") && strings.Count(entry, "/") == 2 {
		return matchLegacyMIG(all, entry)
	}
	if !strings.HasPrefix(upper, "GPU-") && !strings.HasPrefix(upper, "MIG-") {
		return nil, "is neither an index nor a GPU-/MIG- UUID"
	}
	var found []int
	for i, d := range all {
		if hasPrefixFold(d.UUID, entry) || (strings.HasPrefix(upper, "GPU-") && d.MIG && strings.EqualFold(d.ParentUUID, entry)) {
			found = append(found, i)
		}
	}
	gpus := map[int]bool{} // a GPU- UUID of a MIG GPU names all its MIG devices
	for _, i := range found {
		gpus[all[i].Index] = true
	}
	if len(gpus) > 1 || (len(found) > 1 && !strings.HasPrefix(upper, "GPU-")) {
		return nil, "is a prefix of several UUIDs"
	}
	if len(found) == 0 {
		return nil, "names no device this job can see"
	}
	return found, ""
}

// matchLegacyMIG reads MIG-GPU-<uuid>/<gi>/<ci>, the form before driver R470.
func matchLegacyMIG(all []Device, entry string) ([]int, string) {
	parts := strings.Split(entry[len("MIG-"):], "/")
	gi, err1 := strconv.Atoi(parts[1])
	ci, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil {
		return nil, "has a malformed instance id"
	}
	for i, d := range all {
		if d.MIG && strings.EqualFold(d.ParentUUID, parts[0]) && d.GPUInst == gi && d.CompInst == ci {
			return []int{i}, ""
		}
	}
	return nil, "names no device this job can see"
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
