package runmodel

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/catalog"
)

// ExplainTimes chooses the explanation of a job's times that its runs
// support. With three or more profiles, the one that best predicts each
// profile from the others. With two, the simplest that explains both:
// times in the ratio of one resource's shares; else the one that held
// between the same two profiles on the site's reference benchmarks; else the
// resource that explains the speed-up with the smallest fixed share (the
// scarcest one that grew enough: the bottleneck). With fewer it cannot.
func ExplainTimes(points []Point, refs References) (Scaling, bool) {
	points = usable(points)
	if distinct(points) < 2 {
		return Scaling{}, false
	}
	var s Scaling
	held, ok := Scaling{}, false
	if len(points) >= 3 {
		held, ok = explainByHoldout(points, explanations)
	}
	switch {
	case ok:
		s = held
	case len(points) == 2:
		s = explainTwo(points, refs)
	default: // no explanation survives leaving a profile out: the two farthest apart
		byShare := slices.SortedFunc(slices.Values(points), func(a, b Point) int { return cmp.Compare(a.Shares.SM, b.Shares.SM) })
		s = explainTwo([]Point{byShare[0], byShare[len(byShare)-1]}, refs)
	}
	s.exclude = refs.calibrationExclude()
	return s, true
}

// ExplainTimesOn is ExplainTimes among the explanations on resource r
// alone, for times whose shares cannot tell the resources apart while the
// job's memory utilization can: an emulated slice's bandwidth grows with its
// SMs and levels off, so a job with a fixed part on the SMs looks bound by
// bandwidth there. Mixed (the utilization says neither) weighs them all.
func ExplainTimesOn(r catalog.Resource, points []Point, refs References) (Scaling, bool) {
	if r == catalog.Mixed {
		return ExplainTimes(points, refs)
	}
	points = usable(points)
	if distinct(points) < 2 {
		return Scaling{}, false
	}
	var among []explanation
	for _, e := range explanations {
		if e.resource == r {
			among = append(among, e)
		}
	}
	s, ok := Scaling{}, false
	if len(points) >= 3 {
		s, ok = explainByHoldout(points, among)
	}
	if !ok {
		if s, ok = FitOn(r, points); !ok {
			return ExplainTimes(points, refs)
		}
		s.Why = fmt.Sprintf("%s, fitted on %d profiles", s.Bound(), len(points))
	}
	s.exclude = refs.calibrationExclude()
	return s, true
}

// FitOn is the serial explanation (Amdahl, a fixed share) on one resource,
// fitted by least squares; FitOn(catalog.Mixed) is the model before each job
// got its own explanation.
func FitOn(r catalog.Resource, points []Point) (Scaling, bool) {
	points = usable(points)
	f, ok := fitFixed(r, points)
	if !ok {
		return Scaling{}, false
	}
	return Scaling{Resource: r, Fixed: f, Source: fittedSource(f, len(points))}, true
}

// FitEach is every explanation ExplainTimes weighs, fitted on the points:
// for scoring how well the best of them could have done.
func FitEach(points []Point) []Scaling {
	points = usable(points)
	var out []Scaling
	for _, e := range explanations {
		if s, ok := e.fit(points); ok {
			out = append(out, s)
		}
	}
	return out
}

// usable are the points a fit can use.
func usable(points []Point) []Point {
	return slices.DeleteFunc(slices.Clone(points), func(p Point) bool {
		return p.Seconds <= 0 || p.Shares.SM <= 0 || p.Shares.Bandwidth <= 0
	})
}

// distinct counts the points of different sizes on some resource.
func distinct(points []Point) int {
	n := 0
	for i, p := range points {
		if !slices.ContainsFunc(points[:i], func(q Point) bool { return q.Shares == p.Shares }) {
			n++
		}
	}
	return n
}

// An explanation is a resource and how the rest of the job's time
// combines with the part that scales with it: there is none (pure: time ∝
// 1/share), it adds to it (serial: Amdahl, a fixed share), or it overlaps it
// (the job is as slow as the slower of the two, so it gains until the rest
// is the longer: GROMACS's CPU threads beside its GPU kernels, a data loader
// feeding the GPU).
type explanation struct {
	resource catalog.Resource
	form     form
}

type form int

const (
	pure form = iota
	serial
	overlapped
)

// explanations are every one ExplainTimes weighs, simplest first: no other
// part before a fixed share before a floor, one resource before both.
var explanations = func() []explanation {
	var out []explanation
	for _, f := range []form{pure, serial, overlapped} {
		for _, r := range []catalog.Resource{catalog.SMs, catalog.Bandwidth, catalog.Mixed} {
			out = append(out, explanation{r, f})
		}
	}
	return out
}()

func (e explanation) String() string {
	switch e.form {
	case serial:
		return e.resource.String() + " with a fixed share"
	case overlapped:
		return e.resource.String() + " until something else limits it"
	}
	return e.resource.String() + " alone"
}

// fit is the explanation fitted on the points: it needs two of different
// shares of the resource.
func (e explanation) fit(points []Point) (Scaling, bool) {
	if distinctShares(e.resource, points) < 2 {
		return Scaling{}, false
	}
	switch e.form {
	case serial:
		f, ok := fitFixed(e.resource, points)
		return Scaling{Resource: e.resource, Fixed: f}, ok
	case overlapped:
		// No floor seen yet is no floor: the job scales as if alone.
		return Scaling{Resource: e.resource, Limit: fitLimit(e.resource, points)}, true
	}
	return Scaling{Resource: e.resource}, true
}

// distinctShares counts the points' different shares of resource r.
func distinctShares(r catalog.Resource, points []Point) int {
	var seen []float64
	for _, p := range points {
		if !slices.ContainsFunc(seen, func(v float64) bool { return math.Abs(v-p.Shares.Of(r)) < 1e-9 }) {
			seen = append(seen, p.Shares.Of(r))
		}
	}
	return len(seen)
}

func explainByHoldout(points []Point, among []explanation) (Scaling, bool) {
	errs, own := map[explanation]float64{}, map[explanation][]float64{}
	for _, e := range among {
		if e.form == overlapped {
			if s, _ := e.fit(points); s.Limit == 0 {
				continue // no floor in the job's times: the pure form already says so
			}
		}
		if o, ok := holdoutErrors(e, points); ok {
			errs[e], own[e] = meanAbs(o), o
		}
	}
	if len(errs) == 0 {
		return Scaling{}, false
	}
	// A less simple explanation must beat the one chosen so far by more than
	// run-to-run noise: three or four noisy times would otherwise favour
	// whatever bends to the noise.
	bestE, chosen := explanation{}, false
	for _, e := range among {
		if err, ok := errs[e]; ok && (!chosen || err < errs[bestE]-RunNoise) {
			bestE, chosen = e, true
		}
	}
	best, _ := bestE.fit(points)
	bestErr := errs[bestE]
	best.own = own[bestE]
	// The runners-up named in the reason: the other resources in the same
	// form, and the same resource in the other form.
	var others []string
	for _, e := range among {
		sameResource, sameForm := e.resource == bestE.resource, e.form == bestE.form
		if err, ok := errs[e]; ok && sameResource != sameForm {
			others = append(others, fmt.Sprintf("%s %.1f%%", e, 100*err))
		}
	}
	best.Source = describe(best, len(points))
	best.Why = fmt.Sprintf("%s: it predicts each measured profile from the others to %.1f%%", best.Bound(), 100*bestErr)
	if len(others) > 0 {
		best.Why += " (" + strings.Join(others, ", ") + ")"
	}
	return best, true
}

// holdoutErrors are the signed log errors of explanation e predicting
// each point from the others.
func holdoutErrors(e explanation, points []Point) ([]float64, bool) {
	var errs []float64
	for i, held := range points {
		rest := slices.Delete(slices.Clone(points), i, i+1)
		s, ok := e.fit(rest)
		if !ok {
			return nil, false
		}
		errs = append(errs, math.Log(held.Seconds/s.at(rest, held.Shares)))
	}
	return errs, true
}

// floorGap is how much slower than scaling predicts the biggest flat
// profile must be to show a floor: far beyond run-to-run noise (Wulver's GROMACS and
// LLM jobs on the whole GPU: 2.5× and 1.9×).
const floorGap = 0.2

// fitLimit fits the overlapped explanation on resource r: the time falls
// as 1/share up to a limiting share, then stays. It tries each split of the
// points, by share, into those still gaining and those at the floor, and
// keeps the one of least squared log error; 0 when no split shows a floor.
func fitLimit(r catalog.Resource, points []Point) float64 {
	sorted := slices.SortedFunc(slices.Values(points), func(a, b Point) int { return cmp.Compare(a.Shares.Of(r), b.Shares.Of(r)) })
	bestLimit, bestErr := 0.0, math.Inf(1)
	for floor := 1; floor < len(sorted); floor++ {
		gaining, flat := sorted[:len(sorted)-floor], sorted[len(sorted)-floor:]
		var work, level float64 // mean log of time × share on the gaining points; of time on the flat ones
		for _, p := range gaining {
			work += math.Log(p.Seconds*p.Shares.Of(r)) / float64(len(gaining))
		}
		for _, p := range flat {
			level += math.Log(p.Seconds) / float64(len(flat))
		}
		limit := math.Exp(work - level)
		if limit > flat[len(flat)-1].Shares.Of(r)*math.Exp(-floorGap) {
			continue // the biggest profile is too close to scaling to show a floor
		}
		var sq float64
		for _, p := range sorted {
			sq += math.Pow(work-math.Log(math.Min(p.Shares.Of(r), limit))-math.Log(p.Seconds), 2)
		}
		if sq < bestErr-1e-12 {
			bestLimit, bestErr = limit, sq
		}
	}
	return bestLimit
}

// maxNegativeFixed is how far below 0 a two-point fit's fixed share may
// fall and still be explained (as 0): a speed-up a little beyond the
// resource's growth is run-to-run noise.
const maxNegativeFixed = 0.05

func explainTwo(points []Point, refs References) Scaling {
	a, b := points[0], points[1]
	if a.Shares.SM > b.Shares.SM {
		a, b = b, a
	}
	speedUp := func(r catalog.Resource) string {
		return fmt.Sprintf("%s ran %.2f× as fast as %s with %.2f× the %s", b.Profile, a.Seconds/b.Seconds, a.Profile,
			b.Shares.Of(r)/a.Shares.Of(r), strings.TrimPrefix(r.String(), "memory "))
	}
	if r, ok := pureOfTwo(a, b); ok {
		return Scaling{Resource: r, Source: fittedSource(0, 2), Why: fmt.Sprintf("bound by %s: %s", r, speedUp(r))}
	}
	if e, err, n, ok := refs.forPair(a, b); ok {
		s, _ := e.fit(points)
		s.Source = describe(s, 2)
		s.Why = fmt.Sprintf("%s, as fits the %s reference benchmarks measured on %s and %s best (their other profiles to %.1f%%, the median of %d)",
			s.Bound(), refs.site.Name, a.Profile, b.Profile, 100*err, n)
		return s
	}
	r, f, ok := bottleneckOfTwo(a, b)
	if !ok {
		f, _ = fitFixed(r, points)
		return Scaling{Resource: r, Fixed: f, Source: fittedSource(f, 2),
			Why: fmt.Sprintf("neither SMs nor bandwidth explain %s to %s (%.2f× as fast); both together assumed",
				a.Profile, b.Profile, a.Seconds/b.Seconds)}
	}
	return Scaling{Resource: r, Fixed: f, Source: fittedSource(f, 2), Why: fmt.Sprintf("bound by %s: %s", r, speedUp(r))}
}

// pureOfTwo is the resource whose shares two times are in the ratio of,
// within run-to-run noise: the simplest explanation, with no fixed part (two
// close profiles, 7g.40gb and full, cannot tell a small fixed share from
// noise).
func pureOfTwo(a, b Point) (catalog.Resource, bool) {
	for _, r := range []catalog.Resource{catalog.SMs, catalog.Bandwidth} {
		pure := (Scaling{Resource: r}).scale(a, b.Shares, 0)
		if a.Shares.Of(r) != b.Shares.Of(r) && math.Abs(math.Log(pure/b.Seconds)) <= 2*RunNoise {
			return r, true
		}
	}
	return catalog.Mixed, false
}

// bottleneckOfTwo is the resource that explains two times with the
// smallest fixed share, and that share; ok is false when none explains
// them: slower on the bigger profile, or faster than any resource grew by
// more than noise.
func bottleneckOfTwo(a, b Point) (r catalog.Resource, fixed float64, ok bool) {
	r, fixed = catalog.Mixed, math.Inf(1)
	for _, c := range []catalog.Resource{catalog.SMs, catalog.Bandwidth, catalog.Mixed} {
		f, exact := exactFixed(c, a, b)
		if exact && f >= -maxNegativeFixed && f <= 1 && f < fixed-0.02 {
			r, fixed = c, f
		}
	}
	if math.IsInf(fixed, 1) {
		return catalog.Mixed, 0, false
	}
	return r, clamp01(fixed), true
}

// Bound says what bounds a job under a fitted explanation, in words:
// "bound by SMs", or up to which share before something else does.
func (s Scaling) Bound() string {
	if s.Limit > 0 {
		return fmt.Sprintf("bound by %s up to about %.0f%% of them, then by something else", s.Resource, 100*s.Limit)
	}
	return "bound by " + s.Resource.String()
}

// describe says what a fit is and rests on.
func describe(s Scaling, profiles int) string {
	if s.Limit > 0 {
		return fmt.Sprintf("no gain beyond %.0f%% of the %s, fitted on %d profiles", 100*s.Limit, s.Resource, profiles)
	}
	return fittedSource(s.Fixed, profiles)
}

// fittedSource says what a fit rests on.
func fittedSource(fixed float64, profiles int) string {
	return fmt.Sprintf("fixed share %.2f, fitted on %d profiles", fixed, profiles)
}

// exactFixed is the fixed share that makes the model pass through both
// points on resource r.
func exactFixed(r catalog.Resource, a, b Point) (float64, bool) {
	xa, xb := 1/a.Shares.Of(r), 1/b.Shares.Of(r)
	if math.Abs(xa-xb) < 1e-9 {
		return 0, false
	}
	ratio := a.Seconds / b.Seconds
	den := ratio - ratio*xb - 1 + xa
	if math.Abs(den) < 1e-12 {
		return 0, false
	}
	return (xa - ratio*xb) / den, true
}

// fitFixed fits f on resource r by least squares of t on 1/s (both parts
// ≥ 0). It needs two points of different share.
func fitFixed(r catalog.Resource, points []Point) (float64, bool) {
	var xs, ys []float64
	for _, p := range points {
		xs, ys = append(xs, 1/p.Shares.Of(r)), append(ys, p.Seconds)
	}
	if len(xs) < 2 {
		return 0, false
	}
	mx, my := mean(xs), mean(ys)
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	if sxx < 1e-12 {
		return 0, false
	}
	b := sxy / sxx
	a := my - b*mx
	switch {
	case b <= 0: // no faster on a bigger slice: nothing scales
		return 1, true
	case a <= 0: // all of it scales
		return 0, true
	}
	return a / (a + b), true
}
