package catalog

import (
	"fmt"
	"strings"
)

// GPUNodes are nodes alike, as the site file's [[gpu_nodes]] lists them:
// how many, how many GPUs each, and how each of their GPUs is cut today.
// What the plan starts from; nothing else reads it.
type GPUNodes struct {
	Name   string `toml:"name"`   // a label or Slurm hostlist, "gpu[01-21]"
	Count  int    `toml:"count"`  // nodes
	GPUs   int    `toml:"gpus"`   // GPUs per node
	Layout string `toml:"layout"` // each GPU's instances by the site's profile names, "3g.40gb,2g.20gb,1g.10gb,1g.10gb", or "full"
}

// WholeProfile is the site's profile of a whole GPU ("full" at most
// sites): how a layout names a GPU out of MIG mode.
func (s *Site) WholeProfile() (*Profile, bool) {
	for i := range s.Profiles {
		if s.Profiles[i].Slice == FullGPU && s.Profiles[i].GPUCount <= 1 {
			return &s.Profiles[i], true
		}
	}
	return nil, false
}

// GPULayout reads one GPU's layout written with the site's profile names
// (or the Slurm types that ask for them): "3g.40gb,2g.20gb,1g.10gb,1g.10gb",
// or "full" for a whole GPU. It checks that the site's GPU model holds the
// instances under NVIDIA's placement rules and returns the site's names of
// them in the order to create them; a whole GPU is its whole profile alone.
func (s *Site) GPULayout(text string) ([]string, error) {
	text = strings.TrimSpace(text)
	if strings.EqualFold(text, WholeGPU) {
		whole, ok := s.WholeProfile()
		if !ok {
			return nil, fmt.Errorf("layout %q: the site has no profile of a whole GPU (slice = %q)", text, FullGPU)
		}
		return []string{whole.Name}, nil
	}
	model, ok := s.Model()
	if !ok {
		return nil, fmt.Errorf("layout %q: the site's gpu_model %q is not one migadvisor knows the placements of", text, s.GPUModel)
	}
	var sliceNames []string
	bySlice := map[string]string{}
	for _, f := range strings.Split(text, ",") {
		f = strings.TrimSpace(f)
		p, ok := s.ProfileNamed(f)
		switch {
		case f == "":
			return nil, fmt.Errorf("layout %q: an empty profile between commas", text)
		case !ok:
			return nil, fmt.Errorf("layout %q: %q is not a profile of the site (its profiles: %s)", text, f, strings.Join(s.ProfileNames(), ", "))
		case !p.IsMIG():
			return nil, fmt.Errorf("layout %q: %s is a whole GPU, which cannot share the GPU with MIG instances", text, p.Name)
		}
		sliceNames = append(sliceNames, p.Slice)
		bySlice[p.Slice] = p.Name
	}
	placed, err := model.Place(sliceNames)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(placed))
	for i, in := range placed {
		out[i] = bySlice[in.Profile]
	}
	return out, nil
}

// checkGPUNodes is resolve's check of [[gpu_nodes]].
func (s *Site) checkGPUNodes() (index int, key, msg string) {
	for i, n := range s.GPUNodes {
		switch {
		case n.Count < 1:
			return i, "count", fmt.Sprintf("gpu_nodes %d: count must be 1 node or more, not %d", i+1, n.Count)
		case n.GPUs < 1:
			return i, "gpus", fmt.Sprintf("gpu_nodes %d: gpus must be 1 GPU per node or more, not %d", i+1, n.GPUs)
		}
		if _, err := s.GPULayout(n.Layout); err != nil {
			return i, "layout", fmt.Sprintf("gpu_nodes %d: %v", i+1, err)
		}
	}
	return -1, "", ""
}
