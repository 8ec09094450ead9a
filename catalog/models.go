package catalog

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

// GPUModel is a GPU and the MIG GPU-instance profiles it can be cut into.
type GPUModel struct {
	Name          string       `toml:"name"`
	Aliases       []string     `toml:"aliases"`
	SMs           int          `toml:"sms"`
	Memory        Size         `toml:"memory"`        // nominal ("80GB")
	UsableMemory  Size         `toml:"usable_memory"` // what CUDA reports
	MemorySlices  int          `toml:"memory_slices"`
	ComputeSlices int          `toml:"compute_slices"`
	Profiles      []MIGProfile `toml:"profiles"`
}

// MIGProfile is one GPU-instance profile of a model, e.g. 1g.10gb.
type MIGProfile struct {
	Name          string `toml:"name"`
	MemorySlices  int    `toml:"memory_slices"`
	ComputeSlices int    `toml:"compute_slices"`
	SMs           int    `toml:"sms"`
	Memory        Size   `toml:"memory"`
	MaxInstances  int    `toml:"max_instances"`
}

//go:embed data/gpus.toml
var gpusTOML []byte

// builtinModels is read at first use: a program that never asks (the sbatch
// wrapper, most of the time) does not pay for it at start-up.
var builtinModels = sync.OnceValue(mustLoadModels)

type modelFile struct {
	Version int        `toml:"version"`
	Models  []GPUModel `toml:"models"`
}

func mustLoadModels() []GPUModel {
	var f modelFile
	if err := decodeStrict("gpus.toml", gpusTOML, &f); err != nil {
		panic(fmt.Sprintf("built-in GPU table: %v", err))
	}
	return f.Models
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
