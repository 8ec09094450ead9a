package catalog

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// GPUModel is a GPU and the MIG GPU-instance profiles it can be cut into.
type GPUModel struct {
	Name          string       `toml:"name"`
	Aliases       []string     `toml:"aliases"`
	SMs           int          `toml:"sms"`           // the whole GPU outside MIG mode
	MIGSMs        int          `toml:"mig_sms"`       // usable in MIG mode: the largest profile's
	Memory        Size         `toml:"memory"`        // nominal ("80GB")
	UsableMemory  Size         `toml:"usable_memory"` // what CUDA reports
	MemorySlices  int          `toml:"memory_slices"`
	ComputeSlices int          `toml:"compute_slices"`
	Profiles      []MIGProfile `toml:"profiles"`
	// The datasheet's boost clock, FP32 cores per SM and memory bandwidth:
	// how much one model's whole GPU does against another's (Relative).
	ClockMHz     int     `toml:"sm_clock_mhz"`
	CoresPerSM   int     `toml:"fp32_cores_per_sm"`
	BandwidthGBs float64 `toml:"bandwidth_gb_s"`
}

// MIGProfile is one GPU-instance profile of a model, e.g. 1g.10gb.
type MIGProfile struct {
	Name          string `toml:"name"`
	MemorySlices  int    `toml:"memory_slices"`
	L2Slices      int    `toml:"l2_slices"` // default memory_slices
	ComputeSlices int    `toml:"compute_slices"`
	SMs           int    `toml:"sms"`
	Memory        Size   `toml:"memory"`
	MaxInstances  int    `toml:"max_instances"`
	// Where NVIDIA lets an instance of the profile start on the GPU's
	// memory-slice axis: what Check and Place hold a layout to.
	Placements Placements `toml:"placements"`
}

// builtinModels is the GPU table of data/gpus.toml, compiled into
// models_gen.go: parsing it on every start cost the sbatch wrapper about a
// millisecond of the three it may add to a submission. TestBuiltinModels
// fails when the two differ ('make generate' writes the Go file again).
func builtinModels() []GPUModel { return generatedModels }

type modelFile struct {
	Version int        `toml:"version"`
	Models  []GPUModel `toml:"models"`
}

// loadModels reads a GPU table, fills defaults and checks it.
func loadModels(name string, data []byte) ([]GPUModel, error) {
	var f modelFile
	if err := decodeStrict(name, data, &f); err != nil {
		return nil, err
	}
	for i := range f.Models {
		m := &f.Models[i]
		for j := range m.Profiles {
			setDefault(&m.Profiles[j].L2Slices, m.Profiles[j].MemorySlices)
		}
		if err := m.check(); err != nil {
			return nil, fmt.Errorf("%s: model %s: %w", name, m.Name, err)
		}
	}
	return f.Models, nil
}

// check keeps the L2 share derived from l2_slices in (0, 1], mig_sms, the
// base of a slice's SM share, the SMs MIG mode actually leaves, and each
// profile's placements on the GPU's memory slices with the profile's size:
// a size that disagrees with memory_slices is a transcription error (the
// guide's A100 table gives 1g.10gb 1/8 of the memory, its placements 2/8).
func (m *GPUModel) check() error {
	largest := 0
	for _, p := range m.Profiles {
		if p.L2Slices < 1 || p.L2Slices > m.MemorySlices {
			return fmt.Errorf("profile %s: l2_slices must be between 1 and memory_slices (%d), not %d", p.Name, m.MemorySlices, p.L2Slices)
		}
		if len(p.Placements.Starts) == 0 {
			return fmt.Errorf(`profile %s: needs its placements as nvidia-smi mig -lgipp prints them (placements = "{0,2,4}:2")`, p.Name)
		}
		if err := p.Placements.check(p, m.MemorySlices); err != nil {
			return fmt.Errorf("profile %s: placements %q: %w", p.Name, p.Placements, err)
		}
		largest = max(largest, p.SMs)
	}
	switch {
	case m.MIGSMs > m.SMs:
		return fmt.Errorf("mig_sms must be at most sms (%d), not %d", m.SMs, m.MIGSMs)
	case m.MIGSMs != largest:
		return fmt.Errorf("mig_sms must be the largest profile's SMs (%d), not %d", largest, m.MIGSMs)
	}
	return nil
}

// LookupModel finds a built-in model by name or alias, ignoring case and a
// leading "NVIDIA ".
func LookupModel(name string) (*GPUModel, bool) {
	key := normaliseModelName(name)
	models := builtinModels()
	for i := range models {
		m := &models[i]
		if normaliseModelName(m.Name) == key {
			return m, true
		}
		for _, a := range m.Aliases {
			if normaliseModelName(a) == key {
				return m, true
			}
		}
	}
	return nil, false
}

// RatedClockMHz is the rated boost clock of the built-in model a device
// name (NVML's) names, the clock Relative compares GPUs at; 0 for a device
// the catalog lacks.
func RatedClockMHz(device string) float64 {
	if m, ok := LookupModel(device); ok {
		return float64(m.ClockMHz)
	}
	return 0
}

func normaliseModelName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.TrimPrefix(s, "nvidia ")
}

// MIGProfile finds a profile of the model by name (e.g. "3g.40gb").
func (m *GPUModel) MIGProfile(name string) (*MIGProfile, bool) {
	for i := range m.Profiles {
		if m.Profiles[i].Name == name {
			return &m.Profiles[i], true
		}
	}
	return nil, false
}

// NominalGB is the memory in a profile's name: 10 for "1g.10gb".
func NominalGB(profile string) (float64, bool) {
	_, mem, ok := strings.Cut(profile, ".")
	mem = strings.TrimSuffix(strings.Split(mem, "+")[0], "gb")
	var gb float64
	if _, err := fmt.Sscanf(mem, "%g", &gb); err != nil || !ok || gb <= 0 {
		return 0, false
	}
	return gb, true
}

// Placements are where an instance of a GPU-instance profile may start on
// the GPU's memory-slice axis and how many slices it takes there, as
// `nvidia-smi mig -lgipp` prints them: "{0,2,4,6}:2". The starts are NVIDIA's,
// read, not derived from the sizes: a 2g.20gb on an A100 may not start at
// slice 6 ({0,2,4}:2) though a 1g.20gb of the same size may ({0,2,4,6}:2).
type Placements struct {
	Starts []int // ascending
	Size   int   // memory slices
}

// ParsePlacements reads placements as nvidia-smi prints them, "{0,4}:4".
func ParsePlacements(text string) (Placements, error) {
	set, size, ok := strings.Cut(strings.TrimSpace(text), ":")
	inner, braced := strings.CutPrefix(strings.TrimSpace(set), "{")
	inner, closed := strings.CutSuffix(inner, "}")
	if !ok || !braced || !closed {
		return Placements{}, fmt.Errorf("%q is not placements as nvidia-smi mig -lgipp prints them ({0,2,4}:2)", text)
	}
	var p Placements
	var err error
	if p.Size, err = strconv.Atoi(strings.TrimSpace(size)); err != nil || p.Size < 1 {
		return Placements{}, fmt.Errorf("placements %q: the size after ':' must be a positive number of memory slices", text)
	}
	for _, f := range strings.Split(inner, ",") {
		start, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || start < 0 {
			return Placements{}, fmt.Errorf("placements %q: %q is not a memory slice's index", text, f)
		}
		if len(p.Starts) > 0 && start <= p.Starts[len(p.Starts)-1] {
			return Placements{}, fmt.Errorf("placements %q: the starts must ascend", text)
		}
		p.Starts = append(p.Starts, start)
	}
	return p, nil
}

// UnmarshalText reads placements from a GPU table.
func (p *Placements) UnmarshalText(b []byte) error {
	v, err := ParsePlacements(string(b))
	*p = v
	return err
}

// String writes the placements as nvidia-smi does.
func (p Placements) String() string {
	starts := make([]string, len(p.Starts))
	for i, s := range p.Starts {
		starts[i] = strconv.Itoa(s)
	}
	return "{" + strings.Join(starts, ",") + "}:" + strconv.Itoa(p.Size)
}

// Allows says whether an instance of the profile may start at slice start.
func (p Placements) Allows(start int) bool {
	_, ok := slices.BinarySearch(p.Starts, start)
	return ok
}

// check holds a profile's placements to its size and the GPU's memory
// slices, and to max_instances: a profile with fewer starts than instances
// could never have all of them.
func (p Placements) check(prof MIGProfile, memorySlices int) error {
	switch {
	case p.Size != prof.MemorySlices:
		return fmt.Errorf("size %d is not the profile's memory_slices (%d)", p.Size, prof.MemorySlices)
	case p.Starts[len(p.Starts)-1]+p.Size > memorySlices:
		return fmt.Errorf("an instance at %d would run past the GPU's %d memory slices", p.Starts[len(p.Starts)-1], memorySlices)
	case len(p.Starts) < prof.MaxInstances:
		return fmt.Errorf("%d starts cannot hold max_instances (%d)", len(p.Starts), prof.MaxInstances)
	}
	return nil
}
