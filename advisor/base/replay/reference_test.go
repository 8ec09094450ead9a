package replay

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// referenceReplay is the replay's semantics written as plainly as they
// read, for queues of a few thousand jobs: at every instant, after its ends
// and submissions, one pass over every pending job in priority order, each
// pool's reservations made afresh, each question answered by summing the
// intervals it overlaps. It shares nothing with Replay but priorityOrder,
// so that Replay's shortcuts (pools planned only on their own events,
// plans stopped once nothing further can start, horizons drawn lazily) are
// checked against what they stand for. No bf_window: Replay's plans hold
// between events only without one (see the package comment).
//
// With an interval (≥ 0) that pass is backfill's cycle, due interval after
// the last (the first at the first submission) once a job was submitted or
// ended since; at the other instants the main scheduler starts pending jobs
// in priority order up to the first that does not fit.
func referenceReplay(slots Slots, jobs []Job, depth int, interval int64) []Placement {
	out := make([]Placement, len(jobs))
	order := make([]int32, len(jobs))
	for i := range order {
		order[i] = int32(i)
	}
	priorityOrder(jobs, order)
	events := map[int64]bool{} // submissions and ends
	for _, j := range jobs {
		events[j.Submit] = true
	}
	running := map[int32]bool{}
	var c cycles
	c.interval = interval
	for len(events) > 0 || c.due {
		t := c.next(events)
		event := events[t]
		delete(events, t)
		for j := range running {
			if out[j].End == t {
				delete(running, j)
			}
		}
		if interval >= 0 && !c.isDue(t, event) {
			mainReference(slots, jobs, order, t, out, running, events)
			continue
		}
		plainPass(slots, jobs, order, depth, t, out, running, events)
	}
	return out
}

// cycles are backfill's, in the reference: plain bookkeeping of when the
// next is due.
type cycles struct {
	interval int64
	ran      bool
	last     int64
	due      bool  // a submission or end since the last
	at       int64 // when, if due
}

// next is the next instant: the earliest event, or the cycle due before.
func (c *cycles) next(events map[int64]bool) int64 {
	t := int64(math.MaxInt64)
	if len(events) > 0 {
		t = slices.Min(slices.Collect(maps.Keys(events)))
	}
	if c.due && c.at < t {
		return c.at
	}
	return t
}

// isDue notes an event at t and says whether a cycle runs at t.
func (c *cycles) isDue(t int64, event bool) bool {
	if event && !c.due {
		c.due, c.at = true, t
		if c.ran {
			c.at = max(t, c.last+c.interval)
		}
	}
	if !c.due || c.at != t {
		return false
	}
	c.ran, c.last, c.due = true, t, false
	return true
}

// mainReference starts pending jobs in priority order while each fits
// the slots free at t.
func mainReference(slots Slots, jobs []Job, order []int32, t int64, out []Placement, running map[int32]bool, events map[int64]bool) {
	used := map[string]int{}
	for j := range running {
		used[jobs[j].Profile] += jobs[j].Count
	}
	for _, j := range order {
		job := jobs[j]
		if job.Submit > t || out[j].Placed || slots[job.Profile] < job.Count {
			continue
		}
		if used[job.Profile]+job.Count > slots[job.Profile] {
			return
		}
		used[job.Profile] += job.Count
		startReference(jobs, j, t, out, running, events)
	}
}

func startReference(jobs []Job, j int32, t int64, out []Placement, running map[int32]bool, events map[int64]bool) {
	end := t + min(jobs[j].RuntimeS, jobs[j].LimitS)
	out[j] = Placement{Placed: true, Start: t, End: end, WaitS: t - jobs[j].Submit}
	running[j] = true
	events[end] = true
}

// plainPass is one plan at t: every pending job in priority order started
// where it fits, else reserved at its earliest start, up to depth jobs
// blocked.
func plainPass(slots Slots, jobs []Job, order []int32, depth int, t int64, out []Placement, running map[int32]bool, events map[int64]bool) {
	type hold struct {
		from, to int64
		n        int
	}
	held := map[string][]hold{} // running jobs to their limits, then reservations
	for j := range running {
		held[jobs[j].Profile] = append(held[jobs[j].Profile], hold{t, out[j].Start + jobs[j].LimitS, jobs[j].Count})
	}
	used := func(p string, at int64) (n int) {
		for _, h := range held[p] {
			if h.from <= at && at < h.to {
				n += h.n
			}
		}
		return n
	}
	fits := func(p string, from, to int64, n int) bool {
		if used(p, from)+n > slots[p] {
			return false
		}
		for _, h := range held[p] {
			if from < h.from && h.from < to && used(p, h.from)+n > slots[p] {
				return false
			}
		}
		return true
	}
	blocked := 0
	for _, j := range order {
		job := jobs[j]
		if job.Submit > t || out[j].Placed || slots[job.Profile] < job.Count {
			continue
		}
		if depth >= 0 && blocked >= depth {
			break
		}
		starts := []int64{t}
		for _, h := range held[job.Profile] {
			starts = append(starts, h.to)
		}
		slices.Sort(starts)
		for _, s := range starts {
			if fits(job.Profile, s, s+job.LimitS, job.Count) {
				held[job.Profile] = append(held[job.Profile], hold{s, s + job.LimitS, job.Count})
				if s == t {
					startReference(jobs, j, t, out, running, events)
				}
				break
			}
		}
		if !out[j].Placed {
			blocked++
		}
	}
}

// tiny draws n jobs of seconds-long limits submitted a few seconds apart
// on slots: every end, limit and submission meets others, and a second
// more or less changes what starts.
func tiny(rng *rand.Rand, n int, slots Slots) []Job {
	profiles := slices.Sorted(maps.Keys(slots))
	jobs := make([]Job, n)
	var at int64
	for i := range jobs {
		at += int64(rng.IntN(3))
		p := profiles[rng.IntN(len(profiles))]
		count := 1
		if p == wholeGPU {
			count = []int{1, 1, 2, 4}[rng.IntN(4)]
		}
		limit := 1 + rng.Int64N(20)
		jobs[i] = Job{ID: int64(i + 1), Submit: at, Priority: int64(rng.IntN(2)), Profile: p, Count: count,
			LimitS: limit, RuntimeS: rng.Int64N(limit + 3)}
	}
	return jobs
}

func TestReplayAgreesWithThePlainReference(t *testing.T) {
	// Few GPUs at full load, many of the jobs on whole GPUs asking 2 or 4,
	// so that reservations and holes abound; some jobs with priorities out
	// of submission order and some submitted at one instant.
	slots := Slots{}.Add(2, "3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb").Add(5, wholeGPU)
	for seed := uint64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewPCG(seed, 41))
		jobs := generate(rng, 600, slots, 1.0)
		for i := range jobs {
			if seed%2 == 0 { // times in 10-minute steps: ends, limits and submissions meet
				jobs[i].Submit -= jobs[i].Submit % 600
				jobs[i].RuntimeS -= jobs[i].RuntimeS % 600
			}
			if rng.IntN(10) == 0 {
				jobs[i].Priority = int64(rng.IntN(3))
			}
			if rng.IntN(10) == 0 && i > 0 {
				jobs[i].Submit = jobs[i-1].Submit
			}
		}
		if seed > 4 {
			jobs = tiny(rng, 600, slots)
		}
		// Backfill at every event, every 30 s (Slurm's default) and every
		// 5 s (a cycle at most every few of the tiny queues' events).
		for _, interval := range []int64{-1, 30, 5} {
			for _, depth := range []int{-1, 3, 40} {
				got, err := Replay(slots, jobs, Options{MaxJobTest: depth, WindowS: -1, BackfillIntervalS: interval})
				if err != nil {
					t.Fatal(err)
				}
				want := referenceReplay(slots, jobs, depth, interval)
				for i := range jobs {
					if got.Jobs[i] != want[i] {
						t.Fatalf("seed %d, depth %d, interval %d: job %+v: %+v, the reference %+v", seed, depth, interval, jobs[i], got.Jobs[i], want[i])
					}
				}
			}
		}
	}
}
