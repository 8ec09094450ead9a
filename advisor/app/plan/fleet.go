package plan

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/migadvisor/migadvisor/advisor/base/replay"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// A Node is one GPU node and how each of its GPUs is cut: the site's
// profile names of each GPU's instances, a whole GPU as the site's whole
// profile alone.
type Node struct {
	Name string     `json:"node"`
	GPUs [][]string `json:"gpus"`
	// MadeUp: the name is not Slurm's but made for the plan (--gpus's
	// node1, a [[gpu_nodes]] label numbered), for the admin to replace.
	MadeUp bool `json:"made_up_name,omitempty"`
}

// A Fleet is the site's GPU nodes.
type Fleet []Node

// FleetFromSite is the fleet the site file's [[gpu_nodes]] describe;
// empty where it has none.
func FleetFromSite(site *catalog.Site) (Fleet, error) {
	var f Fleet
	for _, g := range site.GPUNodes {
		layout, err := site.GPULayout(g.Layout)
		if err != nil {
			return nil, fmt.Errorf("%s: [[gpu_nodes]] %s: %w", site.Source, g.Name, err)
		}
		if !strings.ContainsAny(g.Name, "[,") {
			f = f.add(g.Name, g.Count, g.GPUs, layout) // a label: its nodes numbered after it
			continue
		}
		// A Slurm hostlist: its nodes by their names, which the configs
		// and steps give to slurm.conf and scontrol.
		hosts, err := slurm.ExpandHostlist(g.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: [[gpu_nodes]] %s: %w", site.Source, g.Name, err)
		}
		if len(hosts) != g.Count {
			return nil, fmt.Errorf("%s: [[gpu_nodes]] %s names %d nodes, where its count is %d", site.Source, g.Name, len(hosts), g.Count)
		}
		for _, h := range hosts {
			f = f.add(h, 1, g.GPUs, layout)
		}
	}
	return f, nil
}

// FleetFromCounts is gpus GPUs on nodes of perNode each, cut by the
// layouts given: each "N:LAYOUT" (N of the GPUs, in order) or a LAYOUT
// alone for every GPU not yet given one.
func FleetFromCounts(site *catalog.Site, gpus, perNode int, layouts []string) (Fleet, error) {
	switch {
	case gpus < 1:
		return nil, fmt.Errorf("--gpus %d: give the site's number of GPUs, 1 or more", gpus)
	case perNode < 1:
		return nil, fmt.Errorf("--gpus-per-node %d: give 1 or more", perNode)
	}
	var each [][]string
	var rest []string
	for _, l := range layouts {
		n, text, counted := strings.Cut(l, ":")
		if !counted {
			text = l
		}
		layout, err := site.GPULayout(text)
		if err != nil {
			return nil, fmt.Errorf("--current %q: %w", l, err)
		}
		if !counted {
			if rest != nil {
				return nil, fmt.Errorf("--current %q: a second LAYOUT for every GPU not given one; give one, or N:LAYOUT for N of them", l)
			}
			rest = layout
			continue
		}
		k, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("--current %q: before the colon, how many GPUs are cut so (1 or more)", l)
		}
		for range k {
			each = append(each, layout)
		}
	}
	if rest != nil && len(each) >= gpus {
		return nil, fmt.Errorf("--current %s: the N:LAYOUT ones already cut all %d GPUs, so it cuts none", strings.Join(rest, ","), gpus)
	}
	if rest == nil {
		whole, err := site.GPULayout(catalog.WholeGPU)
		if err != nil {
			return nil, err
		}
		rest = whole
	}
	if len(each) > gpus {
		return nil, fmt.Errorf("--current gives layouts of %d GPUs, more than --gpus %d", len(each), gpus)
	}
	for len(each) < gpus {
		each = append(each, rest)
	}
	var f Fleet
	for i := 0; i < gpus; i += perNode {
		n := Node{Name: fmt.Sprintf("node%0*d", len(strconv.Itoa((gpus+perNode-1)/perNode)), i/perNode+1), MadeUp: true}
		n.GPUs = slices.Clone(each[i:min(i+perNode, gpus)])
		f = append(f, n)
	}
	return f, nil
}

// add adds count nodes named after name, each of gpus GPUs cut as layout.
func (f Fleet) add(name string, count, gpus int, layout []string) Fleet {
	for i := range count {
		n := Node{Name: name}
		if count > 1 {
			n.Name, n.MadeUp = fmt.Sprintf("%s-%d", name, i+1), true
		}
		for range gpus {
			n.GPUs = append(n.GPUs, layout)
		}
		f = append(f, n)
	}
	return f
}

// Slots counts the fleet's slices of each profile.
func (f Fleet) Slots() replay.Slots {
	s := replay.Slots{}
	for _, n := range f {
		for _, g := range n.GPUs {
			s.Add(1, g...)
		}
	}
	return s
}

// GPUs are the fleet's GPUs, each its profile list.
func (f Fleet) GPUs() [][]string {
	var out [][]string
	for _, n := range f {
		out = append(out, n.GPUs...)
	}
	return out
}

// changes counts the GPUs cut otherwise than in today's fleet.
func (f Fleet) changes(today Fleet) int {
	a, b := f.GPUs(), today.GPUs()
	n := 0
	for i := range a {
		if i >= len(b) || !slices.Equal(a[i], b[i]) {
			n++
		}
	}
	return n
}

// Summary is the fleet in a few words: "84 × full, 16 × 3g.40gb+2g.20gb+1g.10gb+1g.10gb".
func (f Fleet) Summary() string {
	counts := map[string]int{}
	var order []string
	for _, g := range f.GPUs() {
		k := strings.Join(g, "+")
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%d × %s", counts[k], k)
	}
	return strings.Join(parts, ", ")
}

// kinds counts the distinct ways the fleet's nodes are cut.
func (f Fleet) kinds() int {
	seen := map[string]bool{}
	for _, n := range f {
		seen[fmt.Sprint(n.GPUs)] = true
	}
	return len(seen)
}

// FleetFromSlurm is the fleet Slurm's nodes describe: each node's GRES
// types read as the site's profiles (a whole GPU each; a node's MIG
// slices packed onto as few GPUs as NVIDIA's placements allow, the larger
// first, as mig-parted would have cut them).
func FleetFromSlurm(site *catalog.Site, nodes []slurm.GPUNode) (Fleet, error) {
	var f Fleet
	for _, n := range nodes {
		var whole, mig []string
		for _, typ := range slices.Sorted(maps.Keys(n.GPUs)) {
			p, err := profileOfType(site, typ)
			if err != nil {
				return nil, fmt.Errorf("node %s: %w", n.Name, err)
			}
			for range n.GPUs[typ] {
				if p.IsMIG() {
					mig = append(mig, p.Name)
				} else {
					whole = append(whole, p.Name)
				}
			}
		}
		node := Node{Name: n.Name}
		for _, w := range whole {
			node.GPUs = append(node.GPUs, []string{w})
		}
		cut, err := pack(site, mig)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
		node.GPUs = append(node.GPUs, cut...)
		f = append(f, node)
	}
	return f, nil
}

func profileOfType(site *catalog.Site, typ string) (*catalog.Profile, error) {
	if typ == "" {
		if p, ok := site.Profile(site.UntypedGPU); ok {
			return p, nil
		}
		return nil, fmt.Errorf("untyped GPUs (gpu:N), and the site file names no untyped_gpu profile")
	}
	if p, ok := site.ProfileForType(typ); ok {
		return p, nil
	}
	return nil, fmt.Errorf("GPU type %q is not a profile of the site file (add it to a profile's gres_types)", typ)
}

// pack puts MIG instances on GPUs, the larger first, each on the first
// GPU that still holds it.
func pack(site *catalog.Site, names []string) ([][]string, error) {
	sizeOf := func(name string) float64 {
		p, _ := site.Profile(name)
		return p.UsableMemory.MiB()
	}
	slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(sizeOf(b), sizeOf(a)) })
	var gpus [][]string
	for _, name := range names {
		placed := false
		for i, g := range gpus {
			if l, err := site.GPULayout(strings.Join(append(slices.Clone(g), name), ",")); err == nil {
				gpus[i], placed = l, true
				break
			}
		}
		if !placed {
			l, err := site.GPULayout(name)
			if err != nil {
				return nil, err
			}
			gpus = append(gpus, l)
		}
	}
	return gpus, nil
}

// FleetSource says where today's GPUs come from: the counts given (GPUs >
// 0), else the site file's [[gpu_nodes]] unless FromSlurm, else Slurm's
// nodes (scontrol show node).
type FleetSource struct {
	Site      *catalog.Site
	GPUs      int
	PerNode   int
	Current   []string
	FromSlurm bool
	Slurm     *slurm.Client
}

// Today is today's fleet from the first source that has it.
func Today(ctx context.Context, src FleetSource) (Fleet, error) {
	switch {
	case src.GPUs > 0:
		return FleetFromCounts(src.Site, src.GPUs, src.PerNode, src.Current)
	case len(src.Site.GPUNodes) > 0 && !src.FromSlurm:
		return FleetFromSite(src.Site)
	}
	nodes, err := src.Slurm.GPUNodes(ctx)
	if err != nil && src.FromSlurm {
		return nil, fmt.Errorf("no GPU nodes to plan: --from-slurm reads Slurm's nodes, which could not be read (%w); without it, the site file's [[gpu_nodes]] or --gpus give them", err)
	}
	if err != nil {
		return nil, fmt.Errorf("no GPU nodes to plan: the site file has no [[gpu_nodes]], no --gpus was given, and Slurm's nodes could not be read (%w)", err)
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("no GPU nodes to plan: Slurm lists no node with a gpu GRES; give --gpus, or [[gpu_nodes]] in the site file")
	}
	return FleetFromSlurm(src.Site, nodes)
}
