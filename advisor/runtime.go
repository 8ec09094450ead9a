package advisor

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/migadvisor/migadvisor/catalog"
)

// The runtime model. A job's wall time on a profile of capacity c (its
// share of the GPU; see catalog.Site.Capacity) is Amdahl's law:
//
//	t(c) = T × (f + (1 − f) / c)
//
// where T is the time on the whole GPU and f the fixed share: the part of
// that time a bigger slice does not shorten (data loading, CPU work, start-up,
// a kernel that cannot fill the GPU). f near 0 is a job bound by the GPU
// (half the slice, twice the time); f near 1 is one bound by something else.
// f is fitted per job when it completed on two or more profiles; otherwise it
// comes from a prior. Predictions are anchored on the measured profile
// nearest in capacity. On the Wulver tables this beats a power law in
// capacity (leave-one-profile-out mean error 8.7% against 14.4%).

// minFixedSpread keeps a range around a fit from two profiles, which is
// exact whatever the noise in the two runs.
const minFixedSpread = 0.1

// lowUtilization is the mean GPU utilization (%) below which a job is taken
// to be bound by something other than the GPU.
const lowUtilization = 30

// Scaling is a fixed share f with its plausible range and where it came from.
type Scaling struct {
	Fixed, Lo, Hi float64
	Source        string
}

// Point is a measured wall time on a profile of the given capacity.
type Point struct {
	Profile  string
	Capacity float64
	Seconds  float64
}

// FitScaling fits f by least squares of t on 1/c (both parts ≥ 0). It needs
// two points of different capacity. With three or more the range spans the
// fits that leave one point out.
func FitScaling(points []Point) (Scaling, bool) {
	f, ok := fitFixed(points)
	if !ok {
		return Scaling{}, false
	}
	lo, hi := f-minFixedSpread, f+minFixedSpread
	if len(points) > 2 {
		for i := range points {
			rest := append(append([]Point{}, points[:i]...), points[i+1:]...)
			if g, ok := fitFixed(rest); ok {
				lo, hi = math.Min(lo, g), math.Max(hi, g)
			}
		}
	}
	return Scaling{Fixed: f, Lo: clamp01(lo), Hi: clamp01(hi),
		Source: fmt.Sprintf("fixed share %.2f, fitted on %d profiles", f, len(points))}, true
}

func fitFixed(points []Point) (float64, bool) {
	var xs, ys []float64
	for _, p := range points {
		if p.Capacity > 0 && p.Seconds > 0 {
			xs, ys = append(xs, 1/p.Capacity), append(ys, p.Seconds)
		}
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

func clamp01(x float64) float64 { return math.Min(math.Max(x, 0), 1) }

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Predict gives the wall time on a profile of the given capacity, with its
// range, from the measured point nearest in capacity.
func (s Scaling) Predict(points []Point, capacity float64) (seconds, lo, hi float64, from Point) {
	from = slices.MinFunc(points, func(a, b Point) int {
		return cmp.Compare(math.Abs(math.Log(a.Capacity/capacity)), math.Abs(math.Log(b.Capacity/capacity)))
	})
	at := func(f float64) float64 { return from.Seconds * (f + (1-f)/capacity) / (f + (1-f)/from.Capacity) }
	seconds, lo, hi = at(s.Fixed), at(s.Lo), at(s.Hi)
	if lo > hi {
		lo, hi = hi, lo
	}
	return seconds, lo, hi, from
}

// Within lowers the fixed share, and its range, until the model predicts
// at least each bound from the measured points: a run that reached its time
// limit on a smaller slice than any measured one proves the job slows down
// there at least that much (a prior that says otherwise would predict the
// profiles in between too fast). A bound that even f = 0 cannot reach is
// left to the profile's own floor.
func (s Scaling) Within(points, bounds []Point) Scaling {
	if len(points) == 0 {
		return s
	}
	limited := ""
	for _, b := range bounds {
		from := slices.MinFunc(points, func(x, y Point) int {
			return cmp.Compare(math.Abs(math.Log(x.Capacity/b.Capacity)), math.Abs(math.Log(y.Capacity/b.Capacity)))
		})
		if b.Capacity <= 0 || b.Capacity >= from.Capacity {
			continue
		}
		at := func(f float64) float64 { return from.Seconds * (f + (1-f)/b.Capacity) / (f + (1-f)/from.Capacity) }
		if at(s.Fixed) >= b.Seconds || at(0) < b.Seconds {
			continue
		}
		lo, hi := 0.0, s.Fixed // at falls as f rises: the largest f that still reaches the bound
		for range 50 {
			if mid := (lo + hi) / 2; at(mid) >= b.Seconds {
				lo = mid
			} else {
				hi = mid
			}
		}
		s.Fixed, s.Lo, s.Hi = lo, math.Min(s.Lo, lo), math.Min(s.Hi, lo)
		limited = b.Profile
	}
	if limited != "" {
		s.Source += fmt.Sprintf(", at most %.2f to meet the time limit reached on %s", s.Fixed, limited)
	}
	return s
}

// BenchmarkPoints are a benchmark's completed runs as points on the site.
func BenchmarkPoints(site *catalog.Site, b *catalog.Benchmark) []Point {
	var points []Point
	for _, r := range b.Rows {
		p, ok := site.Profile(r.Profile)
		if !ok || r.OOM || r.Seconds <= 0 {
			continue
		}
		points = append(points, Point{Profile: r.Profile, Capacity: site.Capacity(p), Seconds: r.Seconds})
	}
	return points
}

// PriorScaling is the scaling of a job measured on one profile or none: the
// median of the fits to the site's reference benchmarks, spanning them all; a
// job whose GPU utilization was low gets a high fixed share instead. Without
// reference benchmarks it spans 0 (GPU-bound) to 1 (GPU-independent).
func PriorScaling(site *catalog.Site, utilization float64) Scaling {
	if utilization >= 0 && utilization < lowUtilization {
		return Scaling{Fixed: 0.9, Lo: 0.75, Hi: 1,
			Source: fmt.Sprintf("fixed share 0.9 (GPU utilization %.0f%%: the GPU is not what limits it)", utilization)}
	}
	return ReferencePrior(site, "")
}

// ReferencePrior is the prior from the site's reference benchmarks but the
// one named exclude ("": all of them): the median of their fitted fixed
// shares, spanning them all. Excluding a job's own benchmark measures how
// well the prior serves a job the references do not already hold.
func ReferencePrior(site *catalog.Site, exclude string) Scaling {
	var fs []float64
	if set, ok := catalog.ReferenceFor(site); ok {
		for i := range set.Benchmarks {
			if b := &set.Benchmarks[i]; b.IsPrior() && b.Name != exclude {
				if fit, ok := FitScaling(BenchmarkPoints(site, b)); ok {
					fs = append(fs, fit.Fixed)
				}
			}
		}
	}
	if len(fs) == 0 {
		return Scaling{Fixed: 0.5, Lo: 0, Hi: 1, Source: "fixed share 0.5, a guess between GPU-bound and not"}
	}
	slices.Sort(fs)
	f := median(fs)
	return Scaling{Fixed: f, Lo: fs[0], Hi: fs[len(fs)-1],
		Source: fmt.Sprintf("fixed share %.2f, the median of %d %s reference benchmarks", f, len(fs), site.Name)}
}

// median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
