package catalog

import (
	"fmt"

	"github.com/migadvisor/migadvisor/internal/textutil"
)

// Describe says what a job is charged, as su prints it: the profile (""
// for CPU only) and how many GPUs of it, its CPUs, memory and hours, and
// the SU of site; atMost where the hours are a --time limit.
func (r Charge) Describe(site, profile string, gpus int, atMost bool) string {
	what := "CPU only"
	if profile != "" {
		what = profile
		if gpus > 1 {
			what = fmt.Sprintf("%d × %s", gpus, profile)
		}
	}
	mem := textutil.Number(r.MemGiB) + " GiB RAM"
	if r.MemWholeNode {
		nodes := "a " + r.Partition + " node"
		if r.Nodes > 1 {
			nodes = fmt.Sprintf("%d %s nodes", r.Nodes, r.Partition)
		}
		mem += " (--mem=0: all of " + nodes + ")"
	}
	head := fmt.Sprintf("%s, %s, %s, %s h", what, textutil.Plural(r.CPUs, "CPU"), mem, textutil.Number(r.Hours))
	if r.Partition != "" {
		head += " in " + r.Partition
	}
	if r.Free {
		return fmt.Sprintf("%s on %s: 0 SU (%s)", head, site, r.Reason)
	}
	if atMost {
		return fmt.Sprintf("%s on %s: at most %s SU (%s SU/h), if it runs all of its --time", head, site, FormatSU(r.SU), FormatSU(r.SUPerHour))
	}
	return fmt.Sprintf("%s on %s: %s SU (%s SU/h)", head, site, FormatSU(r.SU), FormatSU(r.SUPerHour))
}
