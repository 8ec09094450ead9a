package catalog

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// WholeGPU is how an admin writes a GPU left out of MIG mode in a layout:
// the whole GPU, all its SMs (an A100's 108, where a 7g.80gb has 98).
const WholeGPU = "full"

// An Instance is one GPU instance of a layout: a profile of the model that
// starts at a slice of the GPU's memory-slice axis and takes the profile's
// memory slices from there.
type Instance struct {
	Profile string `json:"profile"`
	Start   int    `json:"start"`
}

// String is the instance as placements are written: "3g.40gb@4".
func (in Instance) String() string { return fmt.Sprintf("%s@%d", in.Profile, in.Start) }

// A Layout is the GPU instances of one GPU in the order to create them,
// the larger first (NVIDIA's getting-started guide: for a 3-2-1-1 geometry
// "the profile ID 9 or 3g.20gb must be specified first"). A layout without
// instances is the whole GPU, MIG mode off.
type Layout []Instance

// String is the layout as an admin writes it and ParseLayout reads it:
// "3g.40gb,2g.20gb,1g.10gb,1g.10gb", or "full".
func (l Layout) String() string {
	if len(l) == 0 {
		return WholeGPU
	}
	return strings.Join(l.Profiles(), ",")
}

// Placed is the layout with each instance's start: "3g.40gb@4,2g.20gb@0".
func (l Layout) Placed() string {
	if len(l) == 0 {
		return WholeGPU
	}
	s := make([]string, len(l))
	for i, in := range l {
		s[i] = in.String()
	}
	return strings.Join(s, ",")
}

// Profiles are the instances' profiles in creation order.
func (l Layout) Profiles() []string {
	names := make([]string, len(l))
	for i, in := range l {
		names[i] = in.Profile
	}
	return names
}

// Counts is how many instances of each profile the layout has, as
// mig-parted's mig-devices counts them.
func (l Layout) Counts() map[string]int {
	n := map[string]int{}
	for _, in := range l {
		n[in.Profile]++
	}
	return n
}

// A LayoutError says why a GPU cannot hold a layout: the first rule it
// breaks, in words an admin can act on.
type LayoutError struct {
	Model  string // the GPU model's name
	Layout string // the layout as given: profiles, with their starts where known
	Reason string
}

func (e *LayoutError) Error() string {
	return fmt.Sprintf("MIG layout %s on %s: %s", e.Layout, e.Model, e.Reason)
}

func (m *GPUModel) layoutError(layout, format string, args ...any) error {
	return &LayoutError{Model: m.Name, Layout: layout, Reason: fmt.Sprintf(format, args...)}
}

// Check says whether the GPU can hold the layout as NVIDIA's placement
// rules allow: every instance a profile of the model at one of its allowed
// starts, at most max_instances of each profile, no memory slice in two
// instances, and no more compute slices than the GPU has. The error, a
// *LayoutError, names the first rule broken. An empty layout, the whole
// GPU, is valid.
func (m *GPUModel) Check(l Layout) error {
	owner := make([]int, m.MemorySlices) // which instance holds each slice, +1
	counts := map[string]int{}
	compute := 0
	for i, in := range l {
		p, ok := m.MIGProfile(in.Profile)
		if !ok {
			return m.layoutError(l.Placed(), "%s", m.unknownProfile(in.Profile))
		}
		if !p.Placements.Allows(in.Start) || in.Start+p.MemorySlices > m.MemorySlices {
			return m.layoutError(l.Placed(), "%s cannot start at memory slice %d: NVIDIA's placements for it are %s", p.Name, in.Start, p.Placements)
		}
		if counts[p.Name]++; counts[p.Name] > p.MaxInstances {
			return m.layoutError(l.Placed(), "%d instances of %s, the GPU holds at most %d", counts[p.Name], p.Name, p.MaxInstances)
		}
		for s := in.Start; s < in.Start+p.MemorySlices; s++ {
			if o := owner[s]; o != 0 {
				return m.layoutError(l.Placed(), "%s and %s share memory slice %d", l[o-1], in, s)
			}
			owner[s] = i + 1
		}
		compute += p.ComputeSlices
	}
	if compute > m.ComputeSlices {
		return m.layoutError(l.Placed(), "the instances take %d compute slices, the GPU has %d", compute, m.ComputeSlices)
	}
	return nil
}

func (m *GPUModel) unknownProfile(name string) string {
	names := make([]string, len(m.Profiles))
	for i, p := range m.Profiles {
		names[i] = p.Name
	}
	return fmt.Sprintf("%q is not a MIG profile of the %s (its profiles: %s)", name, m.Name, strings.Join(names, ", "))
}

// ParseProfiles reads a layout's profiles as an admin writes them:
// "3g.40gb,2g.20gb,1g.10gb,1g.10gb", any case, spaces allowed; "full" is
// the whole GPU (no profiles). Each name must be a profile of the model; the
// names come back as the model spells them, in the order written.
func (m *GPUModel) ParseProfiles(text string) ([]string, error) {
	text = strings.TrimSpace(text)
	if strings.EqualFold(text, WholeGPU) {
		return nil, nil
	}
	if text == "" {
		return nil, m.layoutError(`""`, "no profiles: write them as 3g.40gb,2g.20gb or %q for the whole GPU", WholeGPU)
	}
	var names []string
	for _, f := range strings.Split(text, ",") {
		f = strings.TrimSpace(f)
		i := slices.IndexFunc(m.Profiles, func(p MIGProfile) bool { return strings.EqualFold(p.Name, f) })
		switch {
		case f == "":
			return nil, m.layoutError(text, "an empty profile between commas")
		case strings.EqualFold(f, WholeGPU):
			return nil, m.layoutError(text, "%q is the whole GPU, out of MIG mode: it cannot share the GPU with instances", WholeGPU)
		case i < 0:
			return nil, m.layoutError(text, "%s", m.unknownProfile(f))
		}
		names = append(names, m.Profiles[i].Name)
	}
	return names, nil
}

// ParseLayout reads a layout as an admin writes it (ParseProfiles) and
// places it (Place).
func (m *GPUModel) ParseLayout(text string) (Layout, error) {
	names, err := m.ParseProfiles(text)
	if err != nil {
		return nil, err
	}
	return m.Place(names)
}

// Place finds where each of the profiles can start so that the GPU holds
// them all, and gives them in the order to create them: the larger first
// (memory, then compute slices, then name), each at the lowest start that
// leaves room for the rest. The search tries every allowed start, so a
// list that fails fits no arrangement at all: the error, a *LayoutError,
// says which limit it exceeds. No profiles is the whole GPU.
func (m *GPUModel) Place(profiles []string) (Layout, error) {
	given := strings.Join(profiles, ",")
	ps := make([]*MIGProfile, len(profiles))
	counts := map[string]int{}
	memory, compute := 0, 0
	for i, name := range profiles {
		p, ok := m.MIGProfile(name)
		if !ok {
			return nil, m.layoutError(given, "%s", m.unknownProfile(name))
		}
		if counts[p.Name]++; counts[p.Name] > p.MaxInstances {
			return nil, m.layoutError(given, "%d instances of %s, the GPU holds at most %d", counts[p.Name], p.Name, p.MaxInstances)
		}
		ps[i] = p
		memory += p.MemorySlices
		compute += p.ComputeSlices
	}
	switch {
	case memory > m.MemorySlices:
		return nil, m.layoutError(given, "the profiles take %d memory slices, the GPU has %d", memory, m.MemorySlices)
	case compute > m.ComputeSlices:
		return nil, m.layoutError(given, "the profiles take %d compute slices, the GPU has %d", compute, m.ComputeSlices)
	}
	slices.SortStableFunc(ps, largerFirst)

	layout := make(Layout, len(ps))
	used := make([]bool, m.MemorySlices)
	var place func(i int) bool
	place = func(i int) bool {
		if i == len(ps) {
			return true
		}
		p := ps[i]
		for _, start := range p.Placements.Starts {
			if start+p.MemorySlices > m.MemorySlices || slices.Contains(used[start:start+p.MemorySlices], true) {
				continue
			}
			setRange(used, start, p.MemorySlices, true)
			layout[i] = Instance{Profile: p.Name, Start: start}
			if place(i + 1) {
				return true
			}
			setRange(used, start, p.MemorySlices, false)
		}
		return false
	}
	if !place(0) {
		var rules []string
		for _, p := range slices.CompactFunc(slices.Clone(ps), func(a, b *MIGProfile) bool { return a.Name == b.Name }) {
			rules = append(rules, p.Name+" "+p.Placements.String())
		}
		return nil, m.layoutError(given, "no arrangement fits NVIDIA's placements (%s)", strings.Join(rules, ", "))
	}
	if err := m.Check(layout); err != nil {
		return nil, fmt.Errorf("placing %s: %w", given, err) // a placement Check refuses is a bug here
	}
	return layout, nil
}

// largerFirst orders profiles for creation: more memory slices first, then
// more compute slices, then by name so that equal lists place alike.
func largerFirst(a, b *MIGProfile) int {
	return cmp.Or(
		cmp.Compare(b.MemorySlices, a.MemorySlices),
		cmp.Compare(b.ComputeSlices, a.ComputeSlices),
		strings.Compare(a.Name, b.Name),
	)
}

func setRange(s []bool, start, n int, v bool) {
	for i := start; i < start+n; i++ {
		s[i] = v
	}
}

// Layouts are every MIG layout the model can hold, up to the order of its
// instances: each distinct set of profiles (with repeats) that some
// arrangement of NVIDIA's placements holds, placed as Place places it.
// The whole GPU, out of MIG mode, is not among them. Ordered by the
// number of instances, then by name.
func (m *GPUModel) Layouts() []Layout {
	seen := map[string]bool{}
	var out []Layout
	m.eachArrangement(func(arr Layout) {
		names := arr.Profiles()
		slices.Sort(names)
		key := strings.Join(names, ",")
		if len(arr) == 0 || seen[key] {
			return
		}
		seen[key] = true
		l, err := m.Place(names)
		if err != nil {
			// Place tries every start, so it finds an arrangement that
			// exists (TestLayoutsArePlaced); should it not, this one holds.
			l = slices.Clone(arr)
			slices.SortStableFunc(l, func(a, b Instance) int {
				pa, _ := m.MIGProfile(a.Profile)
				pb, _ := m.MIGProfile(b.Profile)
				return largerFirst(pa, pb)
			})
		}
		out = append(out, l)
	})
	slices.SortFunc(out, func(a, b Layout) int {
		return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a.String(), b.String()))
	})
	return out
}

// eachArrangement calls visit with every arrangement of instances on the
// memory-slice axis that Check accepts, each once, empty included: at each
// slice from the first, either no instance starts there or one of a
// profile allowed to start there, within max_instances and the compute
// slices left.
func (m *GPUModel) eachArrangement(visit func(Layout)) {
	var cur Layout
	counts := map[string]int{}
	compute := 0
	var walk func(slice int)
	walk = func(slice int) {
		if slice >= m.MemorySlices {
			visit(cur)
			return
		}
		walk(slice + 1)
		for i := range m.Profiles {
			p := &m.Profiles[i]
			if !p.Placements.Allows(slice) || slice+p.MemorySlices > m.MemorySlices ||
				counts[p.Name] == p.MaxInstances || compute+p.ComputeSlices > m.ComputeSlices {
				continue
			}
			cur = append(cur, Instance{Profile: p.Name, Start: slice})
			counts[p.Name]++
			compute += p.ComputeSlices
			walk(slice + p.MemorySlices)
			cur = cur[:len(cur)-1]
			counts[p.Name]--
			compute -= p.ComputeSlices
		}
	}
	walk(0)
}
