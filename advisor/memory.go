package advisor

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
)

// runSoftware is the software the runs' output showed: their
// MIGADVISOR_VERSION lines, banners and tracebacks, and the framework of
// an out-of-memory message.
func runSoftware(runs []Run) []memory.Software {
	var seen []memory.Software
	for _, r := range runs {
		for _, name := range r.Software {
			if !slices.ContainsFunc(seen, func(x memory.Software) bool { return x.Name == name }) {
				seen = append(seen, memory.Software{Name: name, Why: fmt.Sprintf("job %s's output shows %s", r.JobID, name)})
			}
		}
	}
	return seen
}

// memoryHolders says what held each run's memory: the script's software
// and settings first (they say why), then what its runs' output showed; a
// run's own settings (a probe's --no-prealloc) over the script's.
func memoryHolders(job Job, runs []Run) func(Run) memory.Holder {
	seen, env := memory.ScriptSoftware(cmp.Or(job.Source, job.Reads))
	for _, s := range runSoftware(runs) {
		if !slices.ContainsFunc(seen, func(x memory.Software) bool { return x.Name == s.Name }) {
			seen = append(seen, s)
		}
	}
	held := memory.HolderOf(seen, env)
	return func(r Run) memory.Holder {
		if len(r.Settings) == 0 {
			return held
		}
		own := maps.Clone(env)
		if own == nil {
			own = map[string]string{}
		}
		maps.Copy(own, r.Settings)
		return memory.HolderOf(seen, own)
	}
}
