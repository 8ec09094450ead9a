package plan

import (
	"cmp"
	"math"
	"slices"

	"github.com/migadvisor/migadvisor/advisor/base/replay"
	"github.com/migadvisor/migadvisor/catalog"
)

// Outcome is one layout replayed with the period's demand.
type Outcome struct {
	Fleet    Fleet            `json:"-"`
	GPUs     [][]string       `json:"gpus"`   // each GPU's profiles
	Layout   string           `json:"layout"` // Fleet.Summary
	Changes  int              `json:"gpus_changed"`
	WaitP50S int64            `json:"wait_p50_s"`
	WaitP95S int64            `json:"wait_p95_s"`
	SU       float64          `json:"su"`
	Range    *OutcomeRange    `json:"range,omitempty"` // with every runtime at either end of its prediction's range
	Profiles []ProfileOutcome `json:"profiles"`
	// Jobs placed; Elsewhere of them ran on a larger profile than they
	// need, the layout having none of theirs; Unplaced no slice of the
	// layout holds (the profile and its larger ones are missing, or more
	// GPUs than it has).
	Jobs      int `json:"jobs"`
	Elsewhere int `json:"jobs_on_a_larger_profile"`
	Unplaced  int `json:"jobs_unplaced"`
	// StrandedGPUHours: slices left idle while jobs of another profile
	// waited, in GPU-hours (a slice counts its share of the GPU's memory
	// slices). Found for the outcomes shown.
	StrandedGPUHours float64 `json:"stranded_gpu_hours"`

	detailed bool
	waits    []int32 // the placed jobs' waits, sorted: the chart's (detailed only)
	placed   []uint8 // each demand job's profile index + 1, 0 unplaced (detailed only)
}

// OutcomeRange is an outcome at the fast and the slow end of the runtime
// model's ranges.
type OutcomeRange struct {
	WaitP95S [2]int64   `json:"wait_p95_s"`
	SU       [2]float64 `json:"su"`
}

// ProfileOutcome is one profile's slices under a layout.
type ProfileOutcome struct {
	Profile  string  `json:"profile"`
	Slots    int     `json:"slices"`
	Jobs     int     `json:"jobs"`
	WaitP50S int64   `json:"wait_p50_s"`
	WaitP95S int64   `json:"wait_p95_s"`
	Busy     float64 `json:"busy"` // share of the slices' time running jobs
}

// evaluator replays layouts with one demand, reusing its buffers from one
// replay to the next: a year of a large site is a million jobs a replay.
type evaluator struct {
	site   *catalog.Site
	demand *Demand
	today  Fleet
	opt    replay.Options
	share  []float64 // each profile's share of a GPU, by index

	jobs  []replay.Job
	index []int32 // the demand job of each replayed job
	waits []int64
	rp    replay.Replayer // each replay in the last one's memory
}

func newEvaluator(site *catalog.Site, d *Demand, today Fleet, opt replay.Options) *evaluator {
	// Buffers as long as the demand, made once: grown by append, a million
	// jobs' would leave arrays of up to twice that behind them.
	n := len(d.Jobs)
	e := &evaluator{site: site, demand: d, today: today, opt: opt, share: make([]float64, len(d.Profiles)),
		jobs: make([]replay.Job, 0, n), index: make([]int32, 0, n), waits: make([]int64, 0, n)}
	model, hasModel := site.Model()
	for k, name := range d.Profiles {
		e.share[k] = 1
		p, _ := site.Profile(name)
		if !hasModel || p == nil || !p.IsMIG() || model.MemorySlices == 0 {
			continue
		}
		if mp, ok := model.MIGProfile(p.Slice); ok {
			e.share[k] = float64(mp.MemorySlices) / float64(model.MemorySlices)
		}
	}
	return e
}

// evaluate replays the fleet with the runtimes w picks. A detailed outcome
// keeps what the text and the chart show beyond the figures: each job's
// profile, the waits, the stranded slices.
func (e *evaluator) evaluate(f Fleet, w which, detailed bool) (*Outcome, error) {
	d := e.demand
	slots := f.Slots()
	o := &Outcome{Fleet: f, GPUs: f.GPUs(), Layout: f.Summary(), Changes: f.changes(e.today), detailed: detailed}
	if detailed {
		o.placed = make([]uint8, len(d.Jobs))
	}
	e.jobs, e.index = e.jobs[:0], e.index[:0]
	for i := range d.Jobs {
		j := &d.Jobs[i]
		k, ok := e.profileFor(i, slots)
		if !ok {
			o.Unplaced++
			continue
		}
		if k != int(j.Needs) {
			o.Elsewhere++
		}
		r, _ := d.on(i, k)
		rt := r.of(w)
		e.jobs = append(e.jobs, replay.Job{ID: j.ID, Submit: j.Submit, Profile: d.Profiles[k], Count: int(j.Count), LimitS: limitOn(j, rt), RuntimeS: rt})
		e.index = append(e.index, int32(i))
	}
	res, err := e.rp.Replay(slots, e.jobs, e.opt) // res is good until the next replay
	if err != nil {
		return nil, err
	}
	e.waits = e.waits[:0]
	var su float64
	for n, pl := range res.Jobs {
		i := int(e.index[n])
		if !pl.Placed {
			o.Unplaced++
			continue
		}
		k := d.rank(e.jobs[n].Profile)
		e.waits = append(e.waits, pl.WaitS)
		_, rate := d.on(i, k)
		su += float64(rate) * float64(pl.End-pl.Start) / 3600
		if detailed {
			o.placed[i] = uint8(k + 1)
		}
	}
	o.Jobs = len(e.waits)
	slices.Sort(e.waits)
	o.WaitP50S, o.WaitP95S = percentile(e.waits, 50), percentile(e.waits, 95)
	o.SU = catalog.RoundSU(su)
	for _, ps := range res.Profiles {
		o.Profiles = append(o.Profiles, ProfileOutcome{Profile: ps.Profile, Slots: ps.Slots, Jobs: ps.Jobs,
			WaitP50S: ps.P50WaitS, WaitP95S: ps.P95WaitS, Busy: math.Round(ps.Busy*1000) / 1000})
	}
	slices.SortFunc(o.Profiles, func(a, b ProfileOutcome) int { return cmp.Compare(d.rank(a.Profile), d.rank(b.Profile)) })
	if detailed {
		o.waits = make([]int32, len(e.waits))
		for n, w := range e.waits {
			o.waits[n] = int32(min(w, math.MaxInt32))
		}
		o.StrandedGPUHours = e.stranded(res, slots)
	}
	return o, nil
}

// profileFor is where job i runs under a layout of slots, by profile
// index: the profile it needs, else the smallest larger one the layout
// has and the job has a runtime on.
func (e *evaluator) profileFor(i int, slots replay.Slots) (int, bool) {
	d := e.demand
	j := &d.Jobs[i]
	for k := int(j.Needs); k < len(d.Profiles); k++ {
		if r, _ := d.on(i, k); r.mid > 0 && slots[d.Profiles[k]] >= int(j.Count) {
			return k, true
		}
	}
	return 0, false
}

// limitOn is the job's time limit where it runs rt seconds: its own, or
// longer by as much as the runtime there is longer than it ran, as the
// advice's time line says to ask.
func limitOn(j *Job, rt int64) int64 {
	if rt <= j.ElapsedS {
		return j.LimitS
	}
	return int64(math.Ceil(float64(j.LimitS) * float64(rt) / float64(j.ElapsedS)))
}

// percentile is the nearest-rank percentile of sorted xs.
func percentile(sorted []int64, p int) int64 {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(float64(p)/100*float64(len(sorted)))) - 1
	return sorted[max(k, 0)]
}

// stranded sums the slices left idle while a job of another profile
// waited, in GPU-hours: capacity the layout cut into the wrong shape.
func (e *evaluator) stranded(res replay.Result, slots replay.Slots) float64 {
	d := e.demand
	type event struct {
		t       int64
		profile uint8
		running int32 // +n a job starts on n slices, -n it ends
		waiting int8  // +1 a job is submitted, -1 it starts
	}
	evs := make([]event, 0, 3*len(res.Jobs))
	for n, pl := range res.Jobs {
		if !pl.Placed {
			continue
		}
		j := &d.Jobs[e.index[n]]
		k := uint8(d.rank(e.jobs[n].Profile))
		evs = append(evs, event{j.Submit, k, 0, 1}, event{pl.Start, k, j.Count, -1}, event{pl.End, k, -j.Count, 0})
	}
	slices.SortFunc(evs, func(a, b event) int { return cmp.Compare(a.t, b.t) })
	n := make([]int, len(d.Profiles))
	for k, p := range d.Profiles {
		n[k] = slots[p]
	}
	running, waiting := make([]int32, len(n)), make([]int, len(n))
	totalWaiting := 0
	var sum float64
	for i, ev := range evs {
		running[ev.profile] += ev.running
		waiting[ev.profile] += int(ev.waiting)
		totalWaiting += int(ev.waiting)
		if i+1 == len(evs) || totalWaiting == 0 {
			continue
		}
		dt := float64(evs[i+1].t - ev.t)
		for k := range n {
			if idle := n[k] - int(running[k]); idle > 0 && totalWaiting-waiting[k] > 0 {
				sum += float64(idle) * e.share[k] * dt
			}
		}
	}
	return math.Round(sum/3600*10) / 10
}
