package plan

import (
	"os"
	"runtime/debug"
)

// MemoryLimit is the soft limit on the Go runtime's memory that a plan
// runs under (issue 41: a year of a 500-GPU site in 512 MiB). A million
// jobs keep about 270 MiB live at the search's busiest (the demand, the
// replay's buffers, the queue it replays); left to GOGC=100, the heap
// grows to twice what the last collection found live before the next,
// past 450 MiB. Under the limit the collector runs sooner instead, which
// costs little: the search's replays reuse their memory (replay.Replayer),
// so there is little garbage to collect. A demand larger than the limit
// allows is not refused: past it, the runtime lets the heap grow rather
// than collect without end.
const MemoryLimit = 400 << 20

// LimitMemory sets the Go runtime's soft memory limit to MemoryLimit for a
// plan and returns what sets the one before back. A limit the user set
// (GOMEMLIMIT) or a lower one already set is left as it is.
func LimitMemory() (restore func()) {
	before := debug.SetMemoryLimit(-1) // -1 reads it
	if os.Getenv("GOMEMLIMIT") != "" || before <= MemoryLimit {
		return func() {}
	}
	debug.SetMemoryLimit(MemoryLimit)
	return func() { debug.SetMemoryLimit(before) }
}
