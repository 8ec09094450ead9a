package catalog

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/migadvisor/migadvisor/internal/lazyre"
)

// DiscoveredGPU is a GPU and its MIG GPU-instance profiles as the driver
// reports them (see bench/gpu).
type DiscoveredGPU struct {
	Index      int                 `json:"index"`
	Name       string              `json:"name"` // e.g. "NVIDIA H100 80GB HBM3"
	UUID       string              `json:"uuid"`
	MemoryMiB  uint64              `json:"memory_mib"`
	MIGEnabled bool                `json:"mig_enabled"`
	Model      string              `json:"model,omitempty"` // built-in model it matches
	Profiles   []DiscoveredProfile `json:"profiles"`
}

// DiscoveredProfile is one GPU-instance profile of a discovered GPU.
type DiscoveredProfile struct {
	Name          string `json:"name"` // e.g. "1g.10gb"
	ID            uint32 `json:"id"`   // the profile ID nvidia-smi shows
	Slices        uint32 `json:"slices"`
	MaxInstances  uint32 `json:"max_instances"`
	SMs           uint32 `json:"sms"`
	MemoryMiB     uint64 `json:"memory_mib"`
	MemorySlices  int    `json:"memory_slices"`
	MemorySlicesN int    `json:"memory_slices_total"`
}

var gpuFamily = lazyre.New(`(?i)\b([A-Z]{1,2}\d{2,3}[A-Z]?)\b`)

// GRESPrefix is a short lower-case family name ("h100") for GRES type names.
func (g DiscoveredGPU) GRESPrefix() string {
	if m := gpuFamily.FindStringSubmatch(strings.TrimPrefix(g.Name, "NVIDIA ")); m != nil {
		return strings.ToLower(m[1])
	}
	return "gpu"
}

// SiteTOML writes a complete site file for the discovered GPUs (one entry per
// distinct model), to be edited: GRES type names follow Slurm's AutoDetect
// convention (<family>_<profile>) and may differ from the site's gres.conf.
func SiteTOML(gpus []DiscoveredGPU, host string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Site file discovered by `migadvisor catalog discover` on %s.\n", host)
	for _, g := range gpus {
		mig := "disabled"
		if g.MIGEnabled {
			mig = "enabled"
		}
		fmt.Fprintf(&b, "#   GPU %d: %s, %d MiB, MIG %s\n", g.Index, g.Name, g.MemoryMiB, mig)
	}
	b.WriteString("# Check each request against your gres.conf, list the partitions each profile\n")
	b.WriteString("# is offered in, and set [billing] to your site's SU formula.\n")
	fmt.Fprintf(&b, "version = %d\nname = %q\n", FormatVersion, siteName(host))
	if len(gpus) == 0 {
		return b.String()
	}
	g := gpus[0]
	if g.Model != "" {
		fmt.Fprintf(&b, "gpu_model = %q\n", g.Model)
	}
	b.WriteString("untyped_gpu = \"full\"\n")
	b.WriteString("default_mem_per_cpu = \"4G\"   # Slurm's DefMemPerCPU here\n")
	b.WriteString("# max_walltime = \"2-00:00:00\"\n\n")
	b.WriteString("# SU/h = cpu_weight × max(CPUs, RAM / memory_per_cpu) + gpu_weight × GPU memory / gpu_memory\n")
	b.WriteString("[billing]\ncpu_weight = 1.0\nmemory_per_cpu = \"4G\"\n")
	fmt.Fprintf(&b, "gpu_weight = 0.0   # SU per hour of a whole GPU: set your site's\ngpu_memory = \"%dG\"\nfree_qos = []\n", int(math.Round(NominalTotalGB(g))))
	seen := map[string]bool{}
	for _, p := range sortedProfiles(g.Profiles) {
		if seen[p.Name] || strings.Contains(p.Name, "+") || p.Slices == 0 {
			continue // +me variants are the same slice with media engines
		}
		seen[p.Name] = true
		writeProfile(&b, g, p)
	}
	fmt.Fprintf(&b, "\n[[profiles]]\nname = \"full\"\nslice = \"full\"\nrequest = \"--gres=gpu:%s:1\"\n", g.GRESPrefix())
	fmt.Fprintf(&b, "usable_memory = \"%dMiB\"\n", g.MemoryMiB)
	if g.Model == "" {
		fmt.Fprintf(&b, "sms = %d\nbilled_memory = \"%dMiB\"\nbandwidth_share = 1.0\n", fullSMs(g), g.MemoryMiB)
	}
	return b.String()
}

func writeProfile(b *strings.Builder, g DiscoveredGPU, p DiscoveredProfile) {
	fmt.Fprintf(b, "\n[[profiles]]\nname = %q\nrequest = \"--gres=gpu:%s_%s:1\"\n", p.Name, g.GRESPrefix(), p.Name)
	fmt.Fprintf(b, "sms = %d\nusable_memory = \"%dMiB\"\n", p.SMs, p.MemoryMiB)
	if g.Model == "" {
		if gb, ok := NominalGB(p.Name); ok {
			fmt.Fprintf(b, "billed_memory = \"%gG\"\n", gb)
		}
		fmt.Fprintf(b, "bandwidth_share = %g\n", float64(p.MemorySlices)/float64(max(p.MemorySlicesN, 1)))
	}
}

// sortedProfiles orders profiles from the smallest (fewest compute slices,
// then least memory) to the largest; NVML lists them in its enum order.
func sortedProfiles(ps []DiscoveredProfile) []DiscoveredProfile {
	out := append([]DiscoveredProfile(nil), ps...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Slices != out[j].Slices {
			return out[i].Slices < out[j].Slices
		}
		return out[i].MemoryMiB < out[j].MemoryMiB
	})
	return out
}

// NominalTotalGB is the GPU's marketed memory, which MIG profile names divide:
// the built-in model's, else the reported memory rounded to whole GiB.
func NominalTotalGB(g DiscoveredGPU) float64 {
	if m, ok := LookupModel(g.Model); ok {
		return m.Memory.GiB()
	}
	return math.Round(float64(g.MemoryMiB) / 1024)
}

func fullSMs(g DiscoveredGPU) uint32 {
	var sms uint32
	for _, p := range g.Profiles {
		sms = max(sms, p.SMs)
	}
	return sms
}

func siteName(host string) string {
	name := strings.ToLower(strings.SplitN(host, ".", 2)[0])
	if name == "" {
		return "my-site"
	}
	return name
}

// NameProfile names a GPU-instance profile from its compute slices and memory
// when the driver does not: "<slices>g.<GB>gb", with the memory rounded to its
// share of the GPU's nominal size, as NVIDIA names them.
func NameProfile(slices uint32, memMiB, largestMiB uint64, nominalGB float64) (name string, memSlices int) {
	memSlices = int(math.Round(8 * float64(memMiB) / float64(max(largestMiB, 1))))
	memSlices = max(memSlices, 1)
	gb := math.Round(nominalGB * float64(memSlices) / 8)
	return fmt.Sprintf("%dg.%dgb", slices, int(gb)), memSlices
}
