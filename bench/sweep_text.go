package bench

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
)

// Submitted: the sweep's variants were submitted (sweep --submit).
func (sw *Sweep) Submitted() bool { return sw.Variants[sw.Profiles[0]].JobID != "" }

// WriteText writes the sweep as a table, a variant a row with its file
// under dir and what it changed beyond the GPU request; with the job ids
// once submitted.
func (sw *Sweep) WriteText(w io.Writer, dir string) error {
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if sw.Submitted() {
		fmt.Fprint(t, "JOB ID\t")
	}
	fmt.Fprintln(t, "PROFILE\tVARIANT\tREQUEST\tJOB NAME\tCHANGED")
	for _, name := range sw.Profiles {
		v := sw.Variants[name]
		var changed []string
		for _, c := range [][2]string{{"partition", v.Partition}, {"qos", v.QoS}, {"time", v.Time}} {
			if c[1] != "" {
				changed = append(changed, c[0]+"="+c[1])
			}
		}
		if sw.Submitted() {
			fmt.Fprintf(t, "%s\t", cmp.Or(v.JobID, "-"))
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\n", name, filepath.Join(dir, v.File), v.Request, v.JobName, cmp.Or(strings.Join(changed, " "), "-"))
	}
	return t.Flush()
}

// NoMonitorReasons are why variants run without the GPU memory monitor
// though it was asked for, each once, in the sweep's order.
func (sw *Sweep) NoMonitorReasons() []string {
	var whys []string
	for _, name := range sw.Profiles {
		if why := sw.Variants[name].NoMonitor; why != "" && !slices.Contains(whys, why) {
			whys = append(whys, why)
		}
	}
	return whys
}
