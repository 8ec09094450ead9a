package plan

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/catalog"
)

// Configs are what applies a layout: mig-parted's config file, the lines
// of gres.conf and slurm.conf, and the steps to re-cut each node.
type Configs struct {
	MigParted string   `json:"mig_parted"`
	GresConf  string   `json:"gres_conf"`
	SlurmConf string   `json:"slurm_conf"`
	Steps     []string `json:"steps"`
	// MadeUpNames are the node names the configs and steps give that are
	// not Slurm's (Node.MadeUp): the admin puts the nodes' own in their place.
	MadeUpNames []string `json:"made_up_names,omitempty"`
}

// nodeConfig is the nodes cut alike and the name of their mig-parted config.
type nodeConfig struct {
	name  string
	gpus  [][]string
	nodes []string
	moved []string // of nodes, those re-cut from today's
}

// ConfigsFor writes the configs of fleet, whose nodes are today's nodes
// re-cut.
func ConfigsFor(site *catalog.Site, fleet, today Fleet) (*Configs, error) {
	groups := nodeConfigs(site, fleet, today)
	c := &Configs{}
	var parted []catalog.MigPartedConfig
	for _, g := range groups {
		pc, err := migPartedConfig(site, g)
		if err != nil {
			return nil, err
		}
		parted = append(parted, pc)
	}
	var buf bytes.Buffer
	if err := catalog.WriteMigParted(&buf, parted); err != nil {
		return nil, err
	}
	c.MigParted = buf.String()
	c.SlurmConf = slurmConf(site, groups)
	c.GresConf = gresConf(site, groups)
	c.Steps = steps(groups)
	for _, n := range fleet {
		if n.MadeUp {
			c.MadeUpNames = append(c.MadeUpNames, n.Name)
		}
	}
	return c, nil
}

// nodeConfigs groups the fleet's nodes by how they are cut, in the order
// each way first appears, with the nodes re-cut from today's.
func nodeConfigs(site *catalog.Site, fleet, today Fleet) []*nodeConfig {
	byKey := map[string]*nodeConfig{}
	var order []string
	for i, n := range fleet {
		k := fmt.Sprint(n.GPUs)
		g := byKey[k]
		if g == nil {
			g = &nodeConfig{name: configName(site, n.GPUs), gpus: n.GPUs}
			byKey[k] = g
			order = append(order, k)
		}
		g.nodes = append(g.nodes, n.Name)
		if i < len(today) && fmt.Sprint(today[i].GPUs) != k {
			g.moved = append(g.moved, n.Name)
		}
	}
	out := make([]*nodeConfig, len(order))
	for i, k := range order {
		out[i] = byKey[k]
	}
	return out
}

// configName names a node's layout as mig-parted's examples do:
// all-disabled, all-1g.10gb, or the instances of each GPU.
func configName(site *catalog.Site, gpus [][]string) string {
	whole, _ := site.WholeProfile()
	same := slices.IndexFunc(gpus, func(g []string) bool { return !slices.Equal(g, gpus[0]) }) < 0
	describe := func(g []string) string {
		if len(g) == 1 && whole != nil && g[0] == whole.Name {
			return "disabled"
		}
		counts := map[string]int{}
		var order []string
		for _, p := range g {
			if counts[p] == 0 {
				order = append(order, p)
			}
			counts[p]++
		}
		parts := make([]string, len(order))
		for i, p := range order {
			parts[i] = p
			if counts[p] > 1 {
				parts[i] = fmt.Sprintf("%dx%s", counts[p], p)
			}
		}
		return strings.Join(parts, "-")
	}
	if same {
		return "all-" + describe(gpus[0])
	}
	parts := make([]string, len(gpus))
	for i, g := range gpus {
		parts[i] = describe(g)
	}
	return "mixed-" + strings.Join(parts, "_")
}

func migPartedConfig(site *catalog.Site, g *nodeConfig) (catalog.MigPartedConfig, error) {
	model, _ := site.Model()
	pc := catalog.MigPartedConfig{Name: g.name}
	for i, gpu := range g.gpus {
		var layout catalog.Layout
		if !(len(gpu) == 1 && !isMIG(site, gpu[0])) {
			slicesOf := make([]string, len(gpu))
			for k, name := range gpu {
				p, _ := site.Profile(name)
				slicesOf[k] = p.Slice
			}
			var err error
			if layout, err = model.Place(slicesOf); err != nil {
				return pc, fmt.Errorf("node config %s: %w", g.name, err)
			}
		}
		d := catalog.MigPartedDevices{Devices: []int{i}, Layout: layout}
		if last := len(pc.Devices) - 1; last >= 0 && slices.Equal(pc.Devices[last].Layout, layout) {
			pc.Devices[last].Devices = append(pc.Devices[last].Devices, i)
			continue
		}
		pc.Devices = append(pc.Devices, d)
	}
	if len(pc.Devices) == 1 {
		pc.Devices[0].Devices = nil // all
	}
	return pc, nil
}

func isMIG(site *catalog.Site, profile string) bool {
	p, ok := site.Profile(profile)
	return ok && p.IsMIG()
}

// slurmConf is each node config's NodeName line's Gres=, by the GRES
// types the site's requests name.
func slurmConf(site *catalog.Site, groups []*nodeConfig) string {
	var b strings.Builder
	b.WriteString("# slurm.conf: the Gres= of each node (keep its other keys)\n")
	for _, g := range groups {
		counts := map[string]int{}
		for _, gpu := range g.gpus {
			for _, name := range gpu {
				p, _ := site.Profile(name)
				counts[p.GRESType]++
			}
		}
		types := slices.Sorted(maps.Keys(counts))
		gres := make([]string, len(types))
		for i, t := range types {
			gres[i] = fmt.Sprintf("gpu:%s:%d", t, counts[t])
		}
		fmt.Fprintf(&b, "NodeName=%s Gres=%s\n", strings.Join(g.nodes, ","), strings.Join(gres, ","))
	}
	return b.String()
}

// gresConf is gres.conf for the re-cut nodes. NVML's autodetection types a
// slice <gpu>_<profile> (a100_3g.40gb), and slurm.conf's Gres= must name
// the types slurmd finds: where the site's types are those, autodetection
// does; where they are the site's own (Wulver's a100_40g), slurmd would
// find other types than slurm.conf names and drain the node, so each
// slice is listed by hand, with the devices slurmd -G prints.
func gresConf(site *catalog.Site, groups []*nodeConfig) string {
	var own []string
	for _, g := range groups {
		for _, gpu := range g.gpus {
			for _, name := range gpu {
				p, ok := site.Profile(name)
				if ok && p.IsMIG() && !strings.HasSuffix(strings.ToLower(p.GRESType), "_"+strings.ToLower(p.Name)) && !slices.Contains(own, p.GRESType) {
					own = append(own, p.GRESType)
				}
			}
		}
	}
	if len(own) == 0 {
		return "# gres.conf on every re-cut node: slurmd finds the MIG devices itself,\n" +
			"# typed <gpu>_<profile> as slurm.conf names them\n" +
			"AutoDetect=nvml\n"
	}
	slices.Sort(own)
	return "# gres.conf on every re-cut node. NVML's autodetection would type each slice\n" +
		"# <gpu>_<profile> (a100_3g.40gb), not this site's " + strings.Join(own, ", ") + ",\n" +
		"# so slurmd would drain the node: list the slices by hand. After mig-parted\n" +
		"# applies the layout, `slurmd -G` on the node prints each slice's devices;\n" +
		"# write one line per slice with Type= the site's name, e.g.\n" +
		"#   Name=gpu Type=" + own[0] + " MultipleFiles=/dev/nvidia<GPU>,/dev/nvidia-caps/nvidia-cap<N>\n" +
		"# (as the node's gres.conf lists its slices today).\n"
}

// steps re-cut each node whose layout changes: drain it, let its jobs
// end, apply the config, restart slurmd with the new Gres, resume.
func steps(groups []*nodeConfig) []string {
	var out []string
	for _, g := range groups {
		if len(g.moved) == 0 {
			continue
		}
		nodes := strings.Join(g.moved, ",")
		out = append(out,
			fmt.Sprintf("scontrol update NodeName=%s State=DRAIN Reason=\"migadvisor plan: re-cut to %s\"", nodes, g.name),
			fmt.Sprintf("wait until squeue --nodelist=%s --noheader prints nothing (running jobs end; MIG cannot re-cut a GPU in use)", nodes),
			fmt.Sprintf("on each of %s: nvidia-mig-parted apply -f mig-parted.yaml -c %s", nodes, g.name),
			fmt.Sprintf("set the Gres= of %s in slurm.conf (slurm_conf in --json, slurm.conf of --page) and gres.conf on them; systemctl restart slurmd on each; scontrol reconfigure", nodes),
			fmt.Sprintf("scontrol update NodeName=%s State=RESUME", nodes))
	}
	return out
}
