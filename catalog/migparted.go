package catalog

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/migadvisor/migadvisor/internal/lazyre"
)

// A MigPartedConfig is one named config of NVIDIA's mig-parted: what a
// node's GPUs are cut into when an admin runs `nvidia-mig-parted apply -c
// NAME` on the drained node. mig-parted applies a config; it chooses no
// layout.
type MigPartedConfig struct {
	Name    string
	Devices []MigPartedDevices
}

// MigPartedDevices is one entry of a config: the GPUs it applies to, by
// index (none: all of them), and the layout each of them gets.
type MigPartedDevices struct {
	Devices []int
	Layout  Layout
}

// mig-parted's config names are the values of the node label
// nvidia.com/mig.config in Kubernetes, so they keep to a label value's
// letters (NVIDIA's examples: all-1g.5gb, custom-config).
var migPartedName = lazyre.New(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)

// WriteMigParted writes configs as a mig-parted file in the form of
// NVIDIA's examples/config.yaml: `version: v1`, then `mig-configs:`, a map
// of named configs, each a list of {devices: all | [indices], mig-enabled,
// mig-devices: {"1g.10gb": 2, ...}}. A whole GPU (an empty layout) is
// mig-enabled: false. mig-devices counts profiles; where each instance
// starts is mig-parted's to find. The layouts are written as given: check
// them against their model first (GPUModel.Check). Names must be unique
// label values, and a config may name a GPU once: an entry for all GPUs is
// the config's only one.
func WriteMigParted(w io.Writer, configs []MigPartedConfig) error {
	if err := checkMigParted(configs); err != nil {
		return err
	}
	b := bufio.NewWriter(w)
	b.WriteString("version: v1\nmig-configs:\n")
	for i, c := range configs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "  %s:\n", c.Name)
		for _, d := range c.Devices {
			fmt.Fprintf(b, "    - devices: %s\n", migPartedDeviceList(d.Devices))
			if len(d.Layout) == 0 {
				b.WriteString("      mig-enabled: false\n")
				continue
			}
			b.WriteString("      mig-enabled: true\n      mig-devices:\n")
			counts := d.Layout.Counts()
			for _, name := range d.Layout.Profiles() { // in creation order: the larger first
				if n := counts[name]; n > 0 {
					fmt.Fprintf(b, "        %s: %d\n", strconv.Quote(name), n)
					counts[name] = 0
				}
			}
		}
	}
	if err := b.Flush(); err != nil {
		return fmt.Errorf("write mig-parted config: %w", err)
	}
	return nil
}

func checkMigParted(configs []MigPartedConfig) error {
	names := map[string]bool{}
	for _, c := range configs {
		switch {
		case !migPartedName.MatchString(c.Name):
			return fmt.Errorf("mig-parted config %q: a name is letters, digits and . _ - inside (a Kubernetes label value)", c.Name)
		case names[c.Name]:
			return fmt.Errorf("mig-parted config %q: named twice", c.Name)
		case len(c.Devices) == 0:
			return fmt.Errorf("mig-parted config %q: no devices", c.Name)
		}
		names[c.Name] = true
		seen := map[int]bool{}
		for _, d := range c.Devices {
			if len(d.Devices) == 0 && len(c.Devices) > 1 {
				return fmt.Errorf("mig-parted config %q: an entry for all devices must be its only one", c.Name)
			}
			for _, i := range d.Devices {
				if i < 0 || seen[i] {
					return fmt.Errorf("mig-parted config %q: device %d is negative or named twice", c.Name, i)
				}
				seen[i] = true
			}
			for _, in := range d.Layout {
				if in.Profile == "" {
					return fmt.Errorf("mig-parted config %q: an instance without a profile", c.Name)
				}
			}
		}
	}
	return nil
}

// migPartedDeviceList writes GPU indices as NVIDIA's example does, [0,1,2,3],
// and no indices as all.
func migPartedDeviceList(devices []int) string {
	if len(devices) == 0 {
		return "all"
	}
	s := make([]string, len(devices))
	for i, d := range devices {
		s[i] = strconv.Itoa(d)
	}
	return "[" + strings.Join(s, ",") + "]"
}
