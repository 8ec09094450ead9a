package plan

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/app/savings"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
)

// Job is one GPU job of the period as the plan sizes it. Its runtime and
// price on each profile are in its Demand (Demand.on), so that a year of
// a large site stays small.
type Job struct {
	ID       int64
	Submit   int64 // Unix seconds
	Start    int64 // when it started, as recorded
	LimitS   int64 // its time limit as it ran
	ElapsedS int64
	Count    int32 // GPUs (slices) at once
	// Asked and Needs are indexes in Demand.Profiles: the profile it ran
	// on, and the one the report's judgement gives it.
	Asked, Needs uint8
	Moved        bool // Needs is the report's move, not what it asked
}

// runtime is a runtime and its range, in seconds; 0: the job cannot run
// on the profile (a smaller slice than it ran on, with no prediction).
type runtime struct{ mid, lo, hi float32 }

// Demand is the period's GPU jobs, sized.
type Demand struct {
	From, Until int64 // the period, Unix seconds
	Jobs        []Job
	// Counts of the period's GPU jobs by what the plan made of them.
	Moved   int // to the slice the report moves them to
	Kept    int // where they ran: right-sized, or no smaller slice pays
	Unknown int // kept where they ran because their fit is unknown (the report's "worth measuring" and not-judged)
	Whole   int // of several GPUs: whole GPUs, as they asked
	// OOM: ran out of GPU memory where they ran, replayed there for the
	// time they ran; a rerun needs a larger slice, for a time unknown.
	OOM      int
	Left     int // not in the demand: never started, or on a GPU type the site file lacks
	LeftWhy  map[string]int
	Profiles []string // the site's profiles, smallest first

	// runtimes and rates hold each job's runtime and SU per hour on each
	// profile, len(Profiles) to a job, in the order of Jobs.
	runtimes []runtime
	rates    []float32
	calc     calcTally // Princeton's calculator's sums over the jobs

	priced map[rateKey][]float32 // ratesOf's, while the demand is built
}

// spentSU is what the jobs spent as they ran: each its SU per hour on the
// profile it ran on, for its elapsed time.
func (d *Demand) spentSU() float64 {
	var su float64
	for i, j := range d.Jobs {
		_, rate := d.on(i, int(j.Asked))
		su += float64(rate) * float64(j.ElapsedS) / 3600
	}
	return math.Round(su*100) / 100
}

// on is job i's runtime and SU per hour on profile index p.
func (d *Demand) on(i, p int) (runtime, float32) {
	k := i*len(d.Profiles) + p
	return d.runtimes[k], d.rates[k]
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
	if len(d.Profiles) > 255 {
		return nil, fmt.Errorf("the site has %d profiles: a plan handles up to 255", len(d.Profiles))
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
	d.sortBySubmit()
	d.priced = nil
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
	case j.MovedTo != "" && d.rank(j.MovedTo) >= 0:
		job.Needs, job.Moved = uint8(d.rank(j.MovedTo)), true
		d.Moved++
	case r.GPUOOM != "":
		d.OOM++ // not right-sized: it did not fit where it ran
	case j.Unjudged != "" || j.Recommendation == nil:
		d.Unknown++
	default:
		d.Kept++
	}
	d.Jobs = append(d.Jobs, job)
	d.runtimes = append(d.runtimes, d.runtimesOf(job, j)...)
	d.rates = append(d.rates, d.ratesOf(site, job, r)...)
	d.calc.add(site, r, job)
}

// fromRecord is the job as it ran, or why the plan cannot replay it.
func (d *Demand) fromRecord(site *catalog.Site, r *history.JobRecord) (Job, string) {
	switch {
	case r.Submit == nil || r.Start == nil || r.ElapsedS == nil:
		return Job{}, "never started"
	case r.Profile == "":
		return Job{}, "a GPU type the site file lacks"
	}
	asked := d.rank(r.Profile)
	if asked < 0 {
		return Job{}, "a GPU type the site file lacks"
	}
	id := jobNumber(r.JobID)
	limit := int64(0)
	if r.TimeLimitMin != nil && *r.TimeLimitMin > 0 {
		limit = *r.TimeLimitMin * 60
	}
	elapsed := max(*r.ElapsedS, 1)
	if limit < elapsed {
		limit = elapsed // unlimited, or an overrun Slurm allowed: the job's own length bounds it
	}
	count := int32(max(r.GPUCount, 1))
	if p, _ := site.Profile(r.Profile); p.GPUCount > 1 {
		count *= int32(p.GPUCount)
	}
	return Job{ID: id, Submit: r.Submit.Unix(), Start: r.Start.Unix(), Count: count, Asked: uint8(asked), Needs: uint8(asked),
		LimitS: limit, ElapsedS: elapsed}, ""
}

// jobNumber is a job id as fmt.Sscan reads it into an int64, as the plan
// numbers jobs: a plain decimal number at once (nearly every one), any
// other through Sscan, whose base prefixes and digit separators are its
// own (123_4, an array task, reads as 1234).
func jobNumber(id string) int64 {
	plain := len(id) > 0 && len(id) <= 18 && id[0] != '0'
	for i := 0; plain && i < len(id); i++ {
		plain = id[i] >= '0' && id[i] <= '9'
	}
	n := int64(0)
	if plain {
		n, _ = strconv.ParseInt(id, 10, 64)
		return n
	}
	fmt.Sscan(id, &n)
	return n
}

// runtimesOf are the job's runtimes on each profile, by index. Where it
// ran: its elapsed time. Where the engine predicts a runtime for its
// script: the elapsed time scaled by the prediction there over the one
// where it ran, with the prediction's range; the report's own ratio for
// the profile it moves it to (a session's: held as long). On a larger
// slice than it ran on with no prediction: no longer than where it ran (a
// slice with more SMs and memory does not slow it), a bound, not a
// prediction. A smaller slice with no prediction it cannot run on.
func (d *Demand) runtimesOf(job Job, j savings.Judged) []runtime {
	el := float64(job.ElapsedS)
	out := make([]runtime, len(d.Profiles))
	set := func(profile string, mid, lo, hi float64) {
		if k := d.rank(profile); k >= 0 {
			out[k] = runtime{float32(mid), float32(min(lo, mid)), float32(max(hi, mid))}
		}
	}
	asked := d.Profiles[job.Asked]
	set(asked, el, el, el)
	if rec := j.Recommendation; rec != nil && job.Count == 1 {
		here := rec.Profile(asked)
		for i := range rec.Profiles {
			there := &rec.Profiles[i]
			if there.Profile == asked || !predicted(there) || !predicted(here) || *here.RuntimeS <= 0 {
				continue
			}
			per := el / *here.RuntimeS
			lo, hi := *there.RuntimeS, *there.RuntimeS
			if rg := there.RuntimeRangeS; rg != nil {
				lo, hi = rg[0], rg[1]
			}
			set(there.Profile, *there.RuntimeS*per, lo*per, hi*per)
		}
	}
	if j.MovedTo != "" {
		set(j.MovedTo, el*j.Ratio, el*j.Ratio, el*j.RatioMax)
	}
	if job.Count == 1 {
		for k := int(job.Asked) + 1; k < len(out); k++ {
			if out[k].mid == 0 {
				out[k] = runtime{float32(el), float32(el), float32(el)}
			}
		}
	}
	return out
}

func predicted(pa *advisor.ProfileAdvice) bool {
	return pa != nil && pa.RuntimeS != nil && !pa.RuntimeAtLeast
}

// rateKey is what a job's SU per hour depends on (advisor.RecordCharge's
// usage, less its time and profile).
type rateKey struct {
	partition, qos string
	cpus           int64
	mem            float64
	gpus           int64
	noCPUs, noMem  bool
}

// ratesOf are the job's SU per hour on each profile, in its partition
// where the profile is offered there, else in the profile's first; the
// same for every job of the same rateKey, priced once.
func (d *Demand) ratesOf(site *catalog.Site, job Job, r *history.JobRecord) []float32 {
	k := rateKey{partition: r.Partition, qos: r.QOS, gpus: r.GPUCount, noCPUs: r.CPUs == nil, noMem: r.ReqMemMiB == nil}
	if r.CPUs != nil {
		k.cpus = *r.CPUs
	}
	if r.ReqMemMiB != nil {
		k.mem = *r.ReqMemMiB
	}
	if out, ok := d.priced[k]; ok {
		return out
	}
	out := d.price(site, r)
	if d.priced == nil {
		d.priced = map[rateKey][]float32{}
	}
	if len(d.priced) < maxPriced {
		d.priced[k] = out
	}
	return out
}

// maxPriced bounds ratesOf's memory: a site whose jobs ask every amount
// of memory has as many keys as jobs.
const maxPriced = 1 << 14

// price is ratesOf, priced.
func (d *Demand) price(site *catalog.Site, r *history.JobRecord) []float32 {
	out := make([]float32, len(d.Profiles))
	hour := int64(3600)
	for k, name := range d.Profiles {
		alt := *r
		alt.Profile, alt.ElapsedS = name, &hour
		if p, ok := site.Profile(name); ok && len(p.Partitions) > 0 && !slices.Contains(p.Partitions, alt.Partition) {
			alt.Partition = p.Partitions[0]
		}
		if ch, ok := advisor.RecordCharge(site, &alt); ok {
			out[k] = float32(ch.SUPerHour)
		}
	}
	return out
}

// sortBySubmit puts the jobs in the order they were submitted (then by
// id), their runtimes and rates with them: the order the replay sorts its
// queue in, which a sort then finds already done on every replay.
func (d *Demand) sortBySubmit() {
	n := len(d.Profiles)
	order := make([]int, len(d.Jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ja, jb := &d.Jobs[a], &d.Jobs[b]
		return cmp.Or(cmp.Compare(ja.Submit, jb.Submit), cmp.Compare(ja.ID, jb.ID))
	})
	jobs := make([]Job, len(d.Jobs))
	rts := make([]runtime, len(d.runtimes))
	rates := make([]float32, len(d.rates))
	for to, from := range order {
		jobs[to] = d.Jobs[from]
		copy(rts[to*n:(to+1)*n], d.runtimes[from*n:(from+1)*n])
		copy(rates[to*n:(to+1)*n], d.rates[from*n:(from+1)*n])
	}
	d.Jobs, d.runtimes, d.rates = jobs, rts, rates
}

func (d *Demand) rank(profile string) int { return slices.Index(d.Profiles, profile) }

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
	return max(int64(math.Ceil(float64(v))), 1)
}
