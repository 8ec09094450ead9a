package plan

import (
	"cmp"
	"math"
	"slices"

	"github.com/migadvisor/migadvisor/advisor/plan/replay"
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
	// slices).
	StrandedGPUHours float64 `json:"stranded_gpu_hours"`

	result replay.Result
	placed []string // each demand job's profile in this layout, "" unplaced
	index  []int    // the demand job of each replayed job
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

// evaluator replays layouts with one demand.
type evaluator struct {
	site   *catalog.Site
	demand *Demand
	today  Fleet
	opt    replay.Options
	share  map[string]float64 // each profile's share of a GPU
}

func newEvaluator(site *catalog.Site, d *Demand, today Fleet, opt replay.Options) *evaluator {
	e := &evaluator{site: site, demand: d, today: today, opt: opt, share: map[string]float64{}}
	model, _ := site.Model()
	for _, name := range d.Profiles {
		p, _ := site.Profile(name)
		e.share[name] = 1
		if mp, ok := model.MIGProfile(p.Slice); ok && p.IsMIG() && model.MemorySlices > 0 {
			e.share[name] = float64(mp.MemorySlices) / float64(model.MemorySlices)
		}
	}
	return e
}

// evaluate replays the fleet with the runtimes w picks.
func (e *evaluator) evaluate(f Fleet, w which) (*Outcome, error) {
	slots := f.Slots()
	o := &Outcome{Fleet: f, GPUs: f.GPUs(), Layout: f.Summary(), Changes: f.changes(e.today)}
	jobs := make([]replay.Job, 0, len(e.demand.Jobs))
	o.placed = make([]string, len(e.demand.Jobs))
	index := make([]int, 0, len(e.demand.Jobs))
	for i := range e.demand.Jobs {
		j := &e.demand.Jobs[i]
		p, ok := e.profileFor(i, slots)
		if !ok {
			o.Unplaced++
			continue
		}
		o.placed[i] = p
		if p != j.Needs {
			o.Elsewhere++
		}
		r, _ := e.demand.on(i, e.demand.rank(p))
		rt := r.of(w)
		jobs = append(jobs, replay.Job{ID: j.ID, Submit: j.Submit, Profile: p, Count: j.Count, LimitS: limitOn(j, rt), RuntimeS: rt})
		index = append(index, i)
	}
	res, err := replay.Replay(slots, jobs, e.opt)
	if err != nil {
		return nil, err
	}
	o.result, o.index = res, index
	o.Jobs = len(jobs)
	waits := make([]int64, 0, len(jobs))
	for k, pl := range res.Jobs {
		if !pl.Placed {
			o.Unplaced++
			o.placed[index[k]] = ""
			continue
		}
		waits = append(waits, pl.WaitS)
		_, rate := e.demand.on(index[k], e.demand.rank(jobs[k].Profile))
		o.SU += float64(rate) * float64(pl.End-pl.Start) / 3600
	}
	o.Jobs = len(waits)
	o.WaitP50S, o.WaitP95S = percentile(waits, 50), percentile(waits, 95)
	o.SU = catalog.RoundSU(o.SU)
	for _, ps := range res.Profiles {
		o.Profiles = append(o.Profiles, ProfileOutcome{Profile: ps.Profile, Slots: ps.Slots, Jobs: ps.Jobs,
			WaitP50S: ps.P50WaitS, WaitP95S: ps.P95WaitS, Busy: math.Round(ps.Busy*1000) / 1000})
	}
	slices.SortFunc(o.Profiles, func(a, b ProfileOutcome) int { return cmp.Compare(e.demand.rank(a.Profile), e.demand.rank(b.Profile)) })
	return o, nil
}

// profileFor is where job i runs under a layout of slots: the profile
// it needs, else the smallest larger one the layout has and the job has a
// runtime on.
func (e *evaluator) profileFor(i int, slots replay.Slots) (string, bool) {
	d := e.demand
	j := &d.Jobs[i]
	for k := max(d.rank(j.Needs), 0); k < len(d.Profiles); k++ {
		p := d.Profiles[k]
		if r, _ := d.on(i, k); r.mid > 0 && slots[p] >= j.Count {
			return p, true
		}
	}
	return "", false
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

// percentile is the nearest-rank percentile of xs (which it sorts).
func percentile(xs []int64, p int) int64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	k := int(math.Ceil(float64(p)/100*float64(len(xs)))) - 1
	return xs[max(k, 0)]
}

// stranded sums the slices left idle while a job of another profile
// waited, in GPU-hours: capacity the layout cut into the wrong shape.
func (e *evaluator) stranded(o *Outcome) float64 {
	type event struct {
		t       int64
		profile string
		running int // +n a job starts on n slices, -n it ends
		waiting int // +1 a job is submitted, -1 it starts
	}
	var evs []event
	for k, pl := range o.result.Jobs {
		if !pl.Placed {
			continue
		}
		j := &e.demand.Jobs[o.index[k]]
		p := o.placed[o.index[k]]
		evs = append(evs, event{j.Submit, p, 0, 1}, event{pl.Start, p, j.Count, -1}, event{pl.End, p, -j.Count, 0})
	}
	slices.SortFunc(evs, func(a, b event) int { return cmp.Compare(a.t, b.t) })
	slots := o.Fleet.Slots()
	running, waiting := map[string]int{}, map[string]int{}
	totalWaiting := 0
	var sum float64
	for i, ev := range evs {
		running[ev.profile] += ev.running
		waiting[ev.profile] += ev.waiting
		totalWaiting += ev.waiting
		if i+1 == len(evs) || totalWaiting == 0 {
			continue
		}
		dt := float64(evs[i+1].t - ev.t)
		for p, n := range slots {
			if idle := n - running[p]; idle > 0 && totalWaiting-waiting[p] > 0 {
				sum += float64(idle) * e.share[p] * dt
			}
		}
	}
	return math.Round(sum/3600*10) / 10
}
