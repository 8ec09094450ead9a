package plan

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/advisor/savings"
	"github.com/migadvisor/migadvisor/catalog"
)

// Job is one GPU job of the period as the plan sizes it.
type Job struct {
	ID       int64
	Record   *history.JobRecord
	Submit   int64 // Unix seconds
	Count    int   // GPUs (slices) at once
	Asked    string
	Needs    string // the profile the report's judgement gives it
	Moved    bool   // Needs is the report's move, not what it asked
	LimitS   int64  // its time limit as it ran
	ElapsedS int64
	// runtimes are its runtime on each profile it can run on: measured
	// where it ran, predicted (with the model's range) where the engine
	// predicts one, and no more than where it ran on a larger slice.
	runtimes map[string]runtime
}

// runtime is a runtime and its range, in seconds.
type runtime struct{ mid, lo, hi float64 }

// Demand is the period's GPU jobs, sized.
type Demand struct {
	From, Until int64 // the period, Unix seconds
	Jobs        []Job
	// Counts of the period's GPU jobs by what the plan made of them.
	Moved    int // to the slice the report moves them to
	Kept     int // where they ran: right-sized, or no smaller slice pays
	Unknown  int // kept where they ran because their fit is unknown (the report's "worth measuring" and not-judged)
	Whole    int // of several GPUs: whole GPUs, as they asked
	Left     int // not in the demand: never started, or on a GPU type the site file lacks
	LeftWhy  map[string]int
	Profiles []string // the site's profiles, smallest first
}

// DemandRequest is what BuildDemand reads.
type DemandRequest struct {
	Site       *catalog.Site
	Period     history.Period
	Thresholds catalog.Report
	Peers      savings.Request // only its Peers are used
	Progress   func(done, total int)
}

// BuildDemand sizes the period's GPU jobs as report judges them: a job the
// report moves needs the profile it moves it to, at the runtime predicted
// there; every other job needs what it ran on, for as long as it ran.
func BuildDemand(ctx context.Context, st *history.Store, req DemandRequest) (*Demand, error) {
	d := &Demand{LeftWhy: map[string]int{}}
	for _, p := range req.Site.ProfilesBySize() {
		d.Profiles = append(d.Profiles, p.Name)
	}
	if !req.Period.From.IsZero() {
		d.From = req.Period.From.Unix()
	}
	if !req.Period.Before.IsZero() {
		d.Until = req.Period.Before.Unix()
	}
	_, err := savings.Build(ctx, st, savings.Request{Site: req.Site, Period: req.Period, Thresholds: req.Thresholds,
		Peers: req.Peers.Peers, Progress: req.Progress, Judged: func(j savings.Judged) { d.add(req.Site, j) }})
	if err != nil {
		return nil, fmt.Errorf("size the period's jobs: %w", err)
	}
	slices.SortFunc(d.Jobs, func(a, b Job) int { return cmp.Or(cmp.Compare(a.Submit, b.Submit), cmp.Compare(a.ID, b.ID)) })
	return d, nil
}

// add sizes one judged job.
func (d *Demand) add(site *catalog.Site, j savings.Judged) {
	r := j.Record
	job, why := d.fromRecord(site, r)
	if why != "" {
		d.Left++
		d.LeftWhy[why]++
		return
	}
	switch {
	case job.Count > 1:
		d.Whole++
	case j.MovedTo != "":
		job.Needs, job.Moved = j.MovedTo, true
		d.Moved++
	case j.Unjudged != "" || j.Recommendation == nil:
		d.Unknown++
	default:
		d.Kept++
	}
	job.runtimes = d.runtimesOf(job, j)
	d.Jobs = append(d.Jobs, job)
}

// fromRecord is the job as it ran, or why the plan cannot replay it.
func (d *Demand) fromRecord(site *catalog.Site, r *history.JobRecord) (Job, string) {
	switch {
	case r.Submit == nil || r.Start == nil || r.ElapsedS == nil:
		return Job{}, "never started"
	case r.Profile == "":
		return Job{}, "a GPU type the site file lacks"
	}
	if _, ok := site.Profile(r.Profile); !ok {
		return Job{}, "a GPU type the site file lacks"
	}
	id := int64(0)
	fmt.Sscan(r.JobID, &id)
	limit := int64(0)
	if r.TimeLimitMin != nil && *r.TimeLimitMin > 0 {
		limit = *r.TimeLimitMin * 60
	}
	elapsed := max(*r.ElapsedS, 1)
	if limit < elapsed {
		limit = elapsed // unlimited, or an overrun Slurm allowed: the job's own length bounds it
	}
	count := int(max(r.GPUCount, 1))
	if p, _ := site.Profile(r.Profile); p.GPUCount > 1 {
		count *= p.GPUCount
	}
	return Job{ID: id, Record: r, Submit: r.Submit.Unix(), Count: count, Asked: r.Profile, Needs: r.Profile,
		LimitS: limit, ElapsedS: elapsed}, ""
}

// runtimesOf are the job's runtimes on each profile it can run on. Where
// it ran: its elapsed time. Where the engine predicts a runtime for its
// script: the elapsed time scaled by the prediction there over the one
// where it ran, with the prediction's range; the report's own ratio for
// the profile it moves it to (a session's: held as long). On a larger
// slice than it ran on with no prediction: no longer than where it ran (a
// slice with more SMs and memory does not slow it), a bound, not a
// prediction. A smaller slice with no prediction it cannot run on.
func (d *Demand) runtimesOf(job Job, j savings.Judged) map[string]runtime {
	el := float64(job.ElapsedS)
	out := map[string]runtime{job.Asked: {el, el, el}}
	if rec := j.Recommendation; rec != nil && job.Count == 1 {
		here := profileAdvice(rec, job.Asked)
		for i := range rec.Profiles {
			there := &rec.Profiles[i]
			if there.Profile == job.Asked || there.RuntimeS == nil || there.RuntimeAtLeast || here == nil || here.RuntimeS == nil || here.RuntimeAtLeast || *here.RuntimeS <= 0 {
				continue
			}
			ratio := *there.RuntimeS / *here.RuntimeS
			rt := runtime{el * ratio, el * ratio, el * ratio}
			if rg := there.RuntimeRangeS; rg != nil {
				rt.lo, rt.hi = el*min(rg[0], *there.RuntimeS) / *here.RuntimeS, el*max(rg[1], *there.RuntimeS) / *here.RuntimeS
			}
			out[there.Profile] = rt
		}
	}
	if j.MovedTo != "" {
		out[j.MovedTo] = runtime{el * j.Ratio, el * min(j.Ratio, j.RatioMax), el * max(j.Ratio, j.RatioMax)}
	}
	asked := d.rank(job.Asked)
	for i, p := range d.Profiles {
		if _, ok := out[p]; !ok && i > asked && job.Count == 1 {
			out[p] = runtime{el, el, el}
		}
	}
	return out
}

func (d *Demand) rank(profile string) int { return slices.Index(d.Profiles, profile) }

func profileAdvice(rec *advisor.Recommendation, profile string) *advisor.ProfileAdvice {
	for i := range rec.Profiles {
		if rec.Profiles[i].Profile == profile {
			return &rec.Profiles[i]
		}
	}
	return nil
}

// which picks the runtime of an estimate: the prediction, or either end
// of its range.
type which int

const (
	mid which = iota
	fast
	slow
)

func (r runtime) of(w which) int64 {
	v := r.mid
	switch w {
	case fast:
		v = r.lo
	case slow:
		v = r.hi
	}
	return max(int64(math.Ceil(v)), 1)
}
