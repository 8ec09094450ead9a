package advisor

import (
	"math"
	"testing"

	"github.com/migadvisor/migadvisor/internal/testutil"

	"github.com/migadvisor/migadvisor/catalog"
)

// amdahl is the model's time on capacity c for whole-GPU time T and fixed share f.
func amdahl(T, f, c float64) float64 { return T * (f + (1-f)/c) }

func TestFitScalingRecoversAmdahl(t *testing.T) {
	var points []Point
	for _, c := range []float64{0.125, 0.25, 0.5, 1} {
		points = append(points, Point{Capacity: c, Seconds: amdahl(100, 0.3, c)})
	}
	fit, ok := FitScaling(points)
	if !ok || math.Abs(fit.Fixed-0.3) > 1e-9 {
		t.Fatalf("fit = %+v, %v; want fixed share 0.3", fit, ok)
	}
	if fit.Hi-fit.Lo < 2*minFixedSpread-1e-9 {
		t.Errorf("an exact fit still keeps a range: %+v", fit)
	}
	if _, ok := FitScaling(points[:1]); ok {
		t.Error("one point cannot fit the model")
	}
	if _, ok := FitScaling([]Point{{Capacity: 0.5, Seconds: 10}, {Capacity: 0.5, Seconds: 12}}); ok {
		t.Error("two points on the same capacity cannot fit the model")
	}
}

func TestFitScalingClampsAndWidensWithNoise(t *testing.T) {
	// Slower on the bigger slice: noise; nothing scales.
	fit, _ := FitScaling([]Point{{Capacity: 0.25, Seconds: 100}, {Capacity: 1, Seconds: 110}})
	if fit.Fixed != 1 || fit.Hi != 1 {
		t.Errorf("fit = %+v, want fixed share 1", fit)
	}
	// Faster than the share grows: all of it scales.
	if fit, _ := FitScaling([]Point{{Capacity: 0.25, Seconds: 500}, {Capacity: 1, Seconds: 100}}); fit.Fixed != 0 || fit.Lo != 0 {
		t.Errorf("fit = %+v, want fixed share 0", fit)
	}
	noisy, _ := FitScaling([]Point{{Capacity: 0.125, Seconds: 100}, {Capacity: 0.25, Seconds: 40},
		{Capacity: 0.5, Seconds: 45}, {Capacity: 1, Seconds: 15}})
	if noisy.Hi-noisy.Lo <= 2*minFixedSpread {
		t.Errorf("noisy points must widen the range: %+v", noisy)
	}
}

func TestPredictAnchorsOnTheNearestProfile(t *testing.T) {
	s := Scaling{Fixed: 0.5, Lo: 0.3, Hi: 0.7}
	points := []Point{{Profile: "a", Capacity: 0.125, Seconds: 400}, {Profile: "b", Capacity: 0.5, Seconds: 150}}
	sec, lo, hi, from := s.Predict(points, 1)
	if from.Profile != "b" || math.Abs(sec-150*amdahl(1, 0.5, 1)/amdahl(1, 0.5, 0.5)) > 1e-9 {
		t.Fatalf("Predict(1) = %g from %s", sec, from.Profile)
	}
	if !(lo < sec && sec < hi) || math.Abs(lo-150*amdahl(1, 0.3, 1)/amdahl(1, 0.3, 0.5)) > 1e-9 {
		t.Errorf("range [%g, %g] around %g", lo, hi, sec)
	}
	// Towards a smaller slice a lower fixed share means a longer time: the range still reads low to high.
	sec, lo, hi, _ = s.Predict(points, 0.0625)
	if !(lo < sec && sec < hi) {
		t.Errorf("range [%g, %g] around %g", lo, hi, sec)
	}
}

func TestPriorScaling(t *testing.T) {
	site := testutil.Wulver(t)
	prior := PriorScaling(site, -1)
	// The five current Wulver tables fit fixed shares from ~0.45 (LLM) to ~0.94 (MNIST).
	if !(prior.Lo < prior.Fixed && prior.Fixed < prior.Hi) || prior.Lo > 0.5 || prior.Hi < 0.9 {
		t.Errorf("prior = %+v", prior)
	}
	if low := PriorScaling(site, 12); low.Fixed <= prior.Fixed || low.Lo < prior.Lo {
		t.Errorf("low utilization prior = %+v, want a higher fixed share than %+v", low, prior)
	}
}

// looError is the leave-one-profile-out error of the runtime model on one
// benchmark: each completed profile predicted from the others.
func looError(site *catalog.Site, points []Point) (errs []float64, covered int) {
	for i, held := range points {
		rest := append(append([]Point{}, points[:i]...), points[i+1:]...)
		fit, ok := FitScaling(rest)
		if !ok {
			continue
		}
		sec, lo, hi, _ := fit.Predict(rest, held.Capacity)
		errs = append(errs, math.Abs(sec-held.Seconds)/held.Seconds)
		if lo <= held.Seconds && held.Seconds <= hi {
			covered++
		}
	}
	return errs, covered
}

// The figures docs/user-guide.md reports: run with -v to see them.
func TestRuntimeModelLeaveOneProfileOut(t *testing.T) {
	site := testutil.Wulver(t)
	set, _ := catalog.ReferenceFor(site)
	var all []float64
	worst, covered := 0.0, 0
	for i := range set.Benchmarks {
		b := &set.Benchmarks[i]
		if !b.IsPrior() {
			continue
		}
		points := BenchmarkPoints(site, b)
		errs, in := looError(site, points)
		covered += in
		fit, _ := FitScaling(points)
		t.Logf("%-24s f=%.2f  LOO error mean %4.1f%%  max %4.1f%%", b.Name, fit.Fixed, 100*mean(errs), 100*slicesMax(errs))
		all = append(all, errs...)
		worst = max(worst, slicesMax(errs))
	}
	t.Logf("all %d predictions: mean %.1f%%, max %.1f%%; %d within their range", len(all), 100*mean(all), 100*worst, covered)
	if len(all) != 17 {
		t.Errorf("%d predictions, want 17 (4+4+3+3+3)", len(all))
	}
	if mean(all) > 0.10 || worst > 0.40 {
		t.Errorf("the model got worse: mean %.1f%%, max %.1f%%", 100*mean(all), 100*worst)
	}
}

func slicesMax(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
