package runmodel

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/catalog"
)

// Times emulated on a faster GPU than the site's say little of a job that
// spends most of its time on its CPUs (a data loader, kernel launches): on
// an H100 slice with three times the SM throughput of an A100's 1g.10gb,
// such a job's GPU time is a few seconds of its wall time, and the
// differences between the slices drown in run-to-run noise (a fifth, for a
// CNN fed by one CPU), while on the real 1g.10gb that GPU time is a third of
// the job. The monitor's GPU utilization measures it directly, with far
// less noise than the wall time: the time the GPU was busy on each slice
// scales with the slice, the time it stood idle does not.

// ExplainWithBusy explains emulated times by the GPU's busy time in them.
// The busy times get their own explanation on resource r (ExplainTimesOn:
// the busy part may have a fixed part of its own, kernels too small to
// fill a bigger slice, or a floor); the rest of each run, the GPU idle, is
// a fixed part, the median over the profiles. False unless every point
// says how long the GPU was busy, two of them differ in share, and the
// busy time falls on the bigger slice by more than run-to-run noise (a
// GPU busy a few percent of the time says little beyond that).
func ExplainWithBusy(r catalog.Resource, points []Point, refs References) (Scaling, bool) {
	points = usable(points)
	s, ok := explainWithBusy(r, points, refs)
	if !ok {
		return Scaling{}, false
	}
	// The job's own evidence of spread: each profile's wall time predicted
	// from the others, as ExplainTimes measures its explanations.
	for i, held := range points {
		rest := slices.Delete(slices.Clone(points), i, i+1)
		if fit, ok := explainWithBusy(r, rest, refs); ok {
			s.own = append(s.own, math.Log(held.Seconds/fit.at(rest, held.Shares)))
		}
	}
	return s, true
}

func explainWithBusy(r catalog.Resource, points []Point, refs References) (Scaling, bool) {
	busy := make([]Point, 0, len(points))
	idle := make([]float64, 0, len(points))
	for _, p := range points {
		if p.Busy <= 0 || p.Busy > p.Seconds*(1+RunNoise) {
			return Scaling{}, false
		}
		busy = append(busy, Point{Profile: p.Profile, Shares: p.Shares, Seconds: p.Busy})
		idle = append(idle, math.Max(p.Seconds-p.Busy, 0))
	}
	if distinct(busy) < 2 {
		return Scaling{}, false
	}
	b, ok := ExplainTimesOn(r, busy, refs)
	if !ok {
		return Scaling{}, false
	}
	lo, hi := slices.MinFunc(points, byShare(b.Resource)), slices.MaxFunc(points, byShare(b.Resource))
	if b.Fixed >= 1 || math.Log(lo.Busy/hi.Busy) <= RunNoise {
		return Scaling{}, false
	}
	slices.Sort(idle)
	rest := Median(idle)
	// The busy part is k·(fb + (1 − fb)/min(s, limit)); the whole time adds
	// the idle part to its fixed term.
	k := b.at(busy, catalog.Shares{SM: 1, Bandwidth: 1}) / b.g(1)
	s := Scaling{Resource: b.Resource, Limit: b.Limit, Fixed: clamp01((rest + k*b.Fixed) / (rest + k)), exclude: b.exclude}
	s.Source = fmt.Sprintf("fixed share %.2f, from the GPU's busy and idle time on %d profiles of the emulation", s.Fixed, len(points))
	s.busyWhy = fmt.Sprintf("in the emulation the GPU was busy %.0f%% of the time on %s and %.0f%% on %s: that part scales (%s), "+
		"the rest, the GPU idle (a median %s a run), does not", 100*lo.Busy/lo.Seconds, lo.Profile,
		100*hi.Busy/hi.Seconds, hi.Profile, b.Form(), idleWords(rest))
	s.Why = s.Bound() + ": " + s.busyWhy
	return s, true
}

// idleWords says a median idle time, in seconds (a job's, or per unit of
// its work).
func idleWords(t float64) string {
	if t >= 1 {
		return fmt.Sprintf("%.0f s", t)
	}
	return fmt.Sprintf("%.2g s", t)
}

func byShare(r catalog.Resource) func(a, b Point) int {
	return func(a, b Point) int { return cmp.Compare(a.Shares.Of(r), b.Shares.Of(r)) }
}

// ExplainEmulated is the explanation of emulated times on resource r (the
// one their memory utilization names; Mixed weighs them all): by the GPU's
// busy time where every profile reports it, else by the times alone.
func ExplainEmulated(r catalog.Resource, points []Point, refs References) (Scaling, bool) {
	if s, ok := ExplainWithBusy(r, points, refs); ok {
		return s, true
	}
	return ExplainTimesOn(r, points, refs)
}

// OnSiteGPU is at, shares of the whole GPU named device, as shares of the
// site's GPU: an emulated slice of an H100 ran with more of an A100's SM
// throughput than its share of the H100's SMs says, and a job with a fixed
// part (start-up, data loading) scales with the absolute speed of what it
// ran on, not with its share. Unchanged, and false, where either GPU lacks
// the figures to compare (catalog.Relative).
func OnSiteGPU(site *catalog.Site, device string, at catalog.Shares) (catalog.Shares, bool) {
	to, ok := site.Model()
	if !ok {
		return at, false
	}
	from, ok := catalog.LookupModel(strings.TrimSpace(device))
	if !ok {
		return at, false
	}
	rel, ok := catalog.Relative(from, to)
	if !ok {
		return at, false
	}
	return at.Times(rel), true
}
