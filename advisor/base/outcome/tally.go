package outcome

import (
	"fmt"
	"strings"
)

// Tally counts a profile's runs by how they ended.
type Tally struct {
	Runs, Completed, GPUOOMs, TimedOut, HostOOM int
	Emulated                                    bool // the runs ran on an emulated slice of a whole GPU
}

// String is the tally as recommend's table shows it: "2 ok, 1 OOM", with
// the runs that ended otherwise as "failed"; "-" with none.
func (t Tally) String() string {
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{t.Completed, "ok"}, {t.GPUOOMs, "OOM"}, {t.TimedOut, "timeout"}, {t.HostOOM, "host OOM"},
		{t.Runs - t.Completed - t.TimedOut - t.HostOOM - t.GPUOOMs, "failed"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	switch {
	case len(parts) == 0:
		return "-"
	case t.Emulated:
		return strings.Join(parts, ", ") + " (emulated)"
	}
	return strings.Join(parts, ", ")
}
