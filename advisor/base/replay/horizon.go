package replay

import (
	"cmp"
	"math"
	"slices"
)

// horizon is one profile's slots as the scheduler sees them during one
// plan: from the plan's instant to the end of bf_window, how many are free
// in each interval once the running jobs end at their time limits and the
// jobs it could not start hold their reservations. Past the window nothing
// is planned, as Slurm's node_space map ends there: every slot counts free.
//
// Counting is enough, with no slot named: slots of a profile are alike, and
// jobs that never outnumber the slots at any instant can always be given
// one slot each for their whole run (an interval graph's colouring).
//
// The running jobs' limits are drawn into intervals only as far as a
// question reaches: most plans look minutes ahead of hundreds of limits.
type horizon struct {
	at   []int64 // at[0] is the plan's instant; interval i is [at[i], at[i+1])
	free []int   // free slots in each interval
	end  int64   // bf_window's end
	// limits are the running jobs' limits, sorted; those from next on are
	// not drawn yet, and the last interval ends at the first of them. No
	// reservation covers the last interval unless it reaches the end.
	limits []ending
	next   int
}

// ending is when a running job's time limit frees its slots.
type ending struct {
	at    int64
	job   int32
	slots int32
}

func (e ending) compare(o ending) int {
	return cmp.Or(cmp.Compare(e.at, o.at), cmp.Compare(e.job, o.job))
}

// reset starts the picture at now with free slots free and the limits
// (sorted) to come; it copies them, as the pool's change while it plans.
func (h *horizon) reset(now, end int64, free int, limits []ending) {
	h.at, h.free, h.end = append(h.at[:0], now), append(h.free[:0], free), end
	h.limits, h.next = append(h.limits[:0], limits...), 0
	h.draw(now)
}

// draw draws the limits up to t, no further than the window's end.
func (h *horizon) draw(t int64) {
	for h.next < len(h.limits) && h.limits[h.next].at <= t && h.limits[h.next].at < h.end {
		e := h.limits[h.next]
		h.next++
		last := len(h.at) - 1
		if e.at <= h.at[last] { // a limit reached at the plan's instant frees its slots now
			h.free[last] += int(e.slots)
			continue
		}
		h.at = append(h.at, e.at)
		h.free = append(h.free, h.free[last]+int(e.slots))
	}
}

// has says whether interval i exists, drawing the next limit for it.
func (h *horizon) has(i int) bool {
	if i == len(h.at) && h.next < len(h.limits) {
		h.draw(h.limits[h.next].at)
	}
	return i < len(h.at)
}

// earliest is the first instant from which n slots stay free for d
// seconds, or until the window's end; false when none starts inside the
// window, where Slurm makes no reservation.
func (h *horizon) earliest(n int, d int64) (int64, bool) {
	for i := 0; h.has(i); {
		if h.free[i] < n {
			i++
			continue
		}
		until := min(after(h.at[i], d), h.end)
		j := i + 1
		for h.has(j) && h.at[j] < until && h.free[j] >= n {
			j++
		}
		if !h.has(j) || h.at[j] >= until {
			return h.at[i], true
		}
		i = j + 1 // interval j lacks slots: no start before it can span it
	}
	return 0, false
}

// hole is how long n slots stay free from the plan's instant: a job asking
// n slots with a longer limit cannot start now. math.MaxInt64 when they
// stay free to the window's end.
func (h *horizon) hole(n int) int64 {
	for i := 0; h.has(i); i++ {
		if h.free[i] < n {
			return h.at[i] - h.at[0]
		}
	}
	return math.MaxInt64
}

// take holds n slots from start for d seconds, or to the window's end: a
// job started now until its time limit, or a reservation.
func (h *horizon) take(start int64, d int64, n int) {
	until := min(after(start, d), h.end)
	h.draw(until)
	i, j := h.split(start), h.split(until)
	for k := i; k < j; k++ {
		h.free[k] -= n
	}
}

// split makes t the start of an interval and returns its index; len(at)
// for the window's end or beyond. The limits up to t are drawn.
func (h *horizon) split(t int64) int {
	if t >= h.end {
		return len(h.at)
	}
	i, found := slices.BinarySearch(h.at, t)
	if found {
		return i
	}
	h.at = slices.Insert(h.at, i, t)
	h.free = slices.Insert(h.free, i, h.free[i-1])
	return i
}
