package runmodel

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/migadvisor/migadvisor/catalog"
)

// The runtime model. A job's wall time on a profile is Amdahl's law in the
// profile's share s of the resource that bounds the job:
//
//	t = T × (f + (1 − f) / s)
//
// where T is the time on the whole GPU and f the fixed share: the part of
// that time a bigger slice does not shorten (data loading, CPU work,
// start-up). The resource is the job's own: its SMs (a compute-bound
// kernel), its memory bandwidth, or both (catalog.Resource). Each job gets
// the explanation its runs support (ExplainTimes); predictions are anchored on the
// measured profile nearest the target and carry a range calibrated on the
// built-in reference benchmarks (calibration.go).

// Scaling is a job's explanation of its times: the resource they scale
// with, the fixed share or the floor, what it rests on, and why it was
// chosen.
type Scaling struct {
	Resource catalog.Resource
	Fixed    float64
	Limit    float64 // the share beyond which the job gains nothing (0: none): see explanation
	Source   string  // e.g. "fixed share 0.12, fitted on 4 profiles"
	Why      string  // why this resource, in a few words
	// own are the signed log errors of this explanation predicting each
	// measured profile from the others: the job's own evidence of spread.
	own []float64
	// exclude names a reference benchmark the range must not learn from.
	exclude string
	// guess marks a prior from the site's typical job: the job may as well
	// be bound by SMs alone, and its range reaches that.
	guess bool
	// table is the published times of the reference benchmark a prior
	// scales the job like: between two of its profiles the job is
	// predicted by their ratio (timeAt), not by the form fitted to them.
	table []Point
	// farthest is what the guess's range reaches where the job's GPU
	// utilization bounds how much of its time scales (busyBound); nil: a
	// job bound by SMs alone.
	farthest *Scaling
	// spread is the range of fixed shares a prior from peers saw: the
	// prediction's range reaches the farthest of them.
	spread fixedRange
	// busyWhy says how the GPU's busy time on emulated slices gave the
	// fixed share (ExplainWithBusy), "" when it did not.
	busyWhy string
}

// fixedRange is a range of fixed shares; ok is false for none.
type fixedRange struct {
	lo, hi float64
	ok     bool
}

// Point is a measured wall time on a profile with the given shares.
type Point struct {
	Profile string
	Shares  catalog.Shares
	Seconds float64
	// Busy is the part of Seconds the GPU was busy, its mean utilization
	// times the time (0: a run did not report it; a MIG slice's monitor
	// cannot): ExplainWithBusy reads it for emulated runs.
	Busy float64
	// Emulated: the time of a slice emulated under MPS (on this GPU or
	// another), not of a real one: it bounds no real slice's time.
	Emulated bool
}

// BusyWhy says how the GPU's busy time on emulated slices gave the fixed
// share (ExplainWithBusy), "" when it did not.
func (s Scaling) BusyWhy() string { return s.busyWhy }

// Distinct counts the usable points (a time and both shares above 0) of
// different shares: the profiles a fit can tell apart.
func Distinct(points []Point) int { return distinct(usable(points)) }

// nearest is the measured point nearest the shares on resource r.
func nearest(r catalog.Resource, points []Point, to catalog.Shares) Point {
	return slices.MinFunc(points, func(a, b Point) int {
		return cmp.Compare(math.Abs(math.Log(a.Shares.Of(r)/to.Of(r))), math.Abs(math.Log(b.Shares.Of(r)/to.Of(r))))
	})
}

// at is the model's time on a profile of these shares, from the nearest point.
func (s Scaling) at(points []Point, to catalog.Shares) float64 {
	from := nearest(s.Resource, points, to)
	return s.scale(from, to, s.Fixed)
}

// timeAt is the time on shares to from point from: the ratio of the
// benchmark's published times where its table has both profiles (a job
// like it scales as it did, the form's fit being only the closest of its
// kind: 12% off the LLM fine-tuning's own times), else the form's.
func (s Scaling) timeAt(from Point, to catalog.Shares) float64 {
	if a, ok := tableAt(s.table, from.Shares); ok {
		if b, ok := tableAt(s.table, to); ok {
			return from.Seconds * b / a
		}
	}
	return s.scale(from, to, s.Fixed)
}

// tableAt is the published time on a profile of these shares.
func tableAt(table []Point, at catalog.Shares) (float64, bool) {
	for _, p := range table {
		if same(p.Shares.SM, at.SM) && same(p.Shares.Bandwidth, at.Bandwidth) {
			return p.Seconds, true
		}
	}
	return 0, false
}

func same(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// Form says how the time depends on the share, in a few words.
func (s Scaling) Form() string {
	switch {
	case s.Limit > 0 && s.Fixed > 0:
		return fmt.Sprintf("Amdahl in min(share, %.2f) of the %s", s.Limit, s.Resource)
	case s.Limit > 0:
		return fmt.Sprintf("time ∝ 1/min(share, %.2f) of the %s", s.Limit, s.Resource)
	case s.Fixed > 0:
		return "Amdahl in the profile's share of " + s.Resource.String()
	}
	return "time ∝ 1/share of the " + s.Resource.String()
}

func (s Scaling) scale(from Point, to catalog.Shares, f float64) float64 {
	s.Fixed = f
	return from.Seconds * s.g(to.Of(s.Resource)) / s.g(from.Shares.Of(s.Resource))
}

// g is the model's time on share x of the resource, in units of the part
// that scales: f + (1 − f)/min(x, limit).
func (s Scaling) g(x float64) float64 {
	if s.Limit > 0 {
		x = math.Min(x, s.Limit)
	}
	return s.Fixed + (1-s.Fixed)/x
}

// Predict gives the wall time on a profile of the given shares, anchored on
// the measured point nearest it, with the range the calibration gives for
// a prediction of its kind (and never narrower than the job's own errors).
func (s Scaling) Predict(points []Point, to catalog.Shares) (seconds, lo, hi float64, from Point) {
	from = nearest(s.Resource, points, to)
	seconds = s.timeAt(from, to)
	b := calibrationFor(s.exclude).band(situationOf(s, points, to))
	for _, e := range s.own {
		b.lo, b.hi = math.Min(b.lo, e), math.Max(b.hi, e)
	}
	lo, hi = seconds*math.Exp(b.lo), seconds*math.Exp(b.hi)
	var reach []float64
	if s.guess {
		far := Scaling{Resource: catalog.SMs}
		if s.farthest != nil {
			far = *s.farthest
		}
		reach = append(reach, far.scale(from, to, far.Fixed))
	}
	if s.spread.ok {
		reach = append(reach, s.scale(from, to, s.spread.lo), s.scale(from, to, s.spread.hi))
	}
	for _, t := range reach {
		lo, hi = math.Min(lo, t), math.Max(hi, t)
	}
	lo, hi = s.withinBusyBound(from, to, seconds, lo, hi)
	seconds, lo, hi = monotone(points, to, seconds, lo, hi)
	return seconds, lo, hi, from
}

// monotone keeps a prediction and its range where the measured points
// allow: a profile with no more SMs and no more bandwidth than a measured
// one is no faster than it, and one with no less of either no slower.
// The calibration's band is symmetric in log time; without this its fast
// end put a slice below the whole GPU's own measured time.
func monotone(points []Point, to catalog.Shares, seconds, lo, hi float64) (float64, float64, float64) {
	for _, p := range points {
		if p.Emulated || p.Seconds <= 0 || p.Shares == to {
			continue
		}
		switch {
		case to.SM <= p.Shares.SM && to.Bandwidth <= p.Shares.Bandwidth:
			seconds, lo, hi = math.Max(seconds, p.Seconds), math.Max(lo, p.Seconds), math.Max(hi, p.Seconds)
		case to.SM >= p.Shares.SM && to.Bandwidth >= p.Shares.Bandwidth:
			seconds, lo, hi = math.Min(seconds, p.Seconds), math.Min(lo, p.Seconds), math.Min(hi, p.Seconds)
		}
	}
	return seconds, lo, hi
}

// withinBusyBound keeps a range within what the GPU's utilization allows
// (busyBound): no slower than the bound on a smaller profile, no faster on
// a bigger one, whatever width the calibration gives a prediction of its
// kind. The prediction itself stays in the range.
func (s Scaling) withinBusyBound(from Point, to catalog.Shares, seconds, lo, hi float64) (float64, float64) {
	b := s.farthest
	if b == nil {
		return lo, hi
	}
	limit := b.scale(from, to, b.Fixed)
	if to.Of(b.Resource) < from.Shares.Of(b.Resource) {
		return lo, math.Max(math.Min(hi, limit), seconds)
	}
	return math.Min(math.Max(lo, limit), seconds), hi
}

// Within lowers the fixed share until the model predicts at least each
// bound from the measured points: a run that reached its time limit on a
// smaller slice than any measured one proves the job slows down there at
// least that much (a prior that says otherwise would predict the profiles in
// between too fast). A bound that even f = 0 cannot reach is left to the
// profile's own floor. A floor (Limit) lies above every bound, which is
// below the measured profiles: it changes nothing here.
func (s Scaling) Within(points, bounds []Point) Scaling {
	if len(points) == 0 {
		return s
	}
	limited := ""
	for _, b := range bounds {
		from := nearest(s.Resource, points, b.Shares)
		if b.Shares.Of(s.Resource) >= from.Shares.Of(s.Resource) {
			continue
		}
		if s.timeAt(from, b.Shares) >= b.Seconds {
			continue
		}
		// The bound rules out the benchmark's own ratios: the form, its
		// fixed share lowered, takes their place.
		s.table = nil
		if s.scale(from, b.Shares, s.Fixed) >= b.Seconds || s.scale(from, b.Shares, 0) < b.Seconds {
			continue
		}
		lo, hi := 0.0, s.Fixed // the time falls as f rises: the largest f that still reaches the bound
		for range 50 {
			if mid := (lo + hi) / 2; s.scale(from, b.Shares, mid) >= b.Seconds {
				lo = mid
			} else {
				hi = mid
			}
		}
		s.Fixed, limited = lo, b.Profile
	}
	if limited != "" {
		s.Source += fmt.Sprintf(", at most %.2f to meet the time limit reached on %s", s.Fixed, limited)
	}
	return s
}

func clamp01(x float64) float64 { return math.Min(math.Max(x, 0), 1) }

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func meanAbs(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += math.Abs(x)
	}
	return s / float64(len(xs))
}

// Median is the median of sorted values.
func Median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
