package advisor

import (
	"math"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/testutil"
)

// a100 is a site with every A100-40GB profile's shares: 3g.20gb and 4g.20gb
// have the same bandwidth and different SMs, 7g.40gb and full the same
// bandwidth and 98 against 108 SMs.
var a100 = map[string]catalog.Shares{
	"1g.5gb": {SM: 14.0 / 108, Bandwidth: 1.0 / 8}, "2g.10gb": {SM: 28.0 / 108, Bandwidth: 2.0 / 8},
	"3g.20gb": {SM: 42.0 / 108, Bandwidth: 4.0 / 8}, "4g.20gb": {SM: 56.0 / 108, Bandwidth: 4.0 / 8},
	"7g.40gb": {SM: 98.0 / 108, Bandwidth: 1}, "full": {SM: 1, Bandwidth: 1},
}

// job is a job bound by resource r with fixed share f, 100 s on the whole GPU.
func job(r catalog.Resource, f float64, profiles ...string) []Point {
	var points []Point
	for _, name := range profiles {
		sh := a100[name]
		points = append(points, Point{Profile: name, Shares: sh, Seconds: 100 * (f + (1-f)/sh.Of(r))})
	}
	return points
}

// Each explanation wins on a job that is bound as it says, from three
// profiles, and then predicts the others exactly.
func TestExplainTimesChoosesTheResourceThatBoundsTheJob(t *testing.T) {
	known := []string{"1g.5gb", "3g.20gb", "4g.20gb", "full"}
	for _, tc := range []struct {
		r catalog.Resource
		f float64
	}{{catalog.SMs, 0}, {catalog.SMs, 0.2}, {catalog.Bandwidth, 0.1}, {catalog.Mixed, 0.3}} {
		s, ok := ExplainTimes(job(tc.r, tc.f, known...))
		if !ok || s.Resource != tc.r || math.Abs(s.Fixed-tc.f) > 1e-6 {
			t.Errorf("%s-bound, f=%.1f: chose %s f=%.3f (%s)", tc.r, tc.f, s.Resource, s.Fixed, s.Why)
			continue
		}
		if !strings.HasPrefix(s.Why, "bound by "+tc.r.String()) {
			t.Errorf("why: %q", s.Why)
		}
		for _, want := range job(tc.r, tc.f, "2g.10gb", "7g.40gb") {
			if sec, lo, hi, _ := s.Predict(job(tc.r, tc.f, known...), want.Shares); math.Abs(sec-want.Seconds) > 1e-6*want.Seconds ||
				lo > sec || hi < sec {
				t.Errorf("%s-bound: %s predicted %.2f s in [%.2f, %.2f], want %.2f", tc.r, want.Profile, sec, lo, hi, want.Seconds)
			}
		}
	}
}

// With two profiles every resource fits them exactly; the one that needs
// the least fixed share is the bottleneck. A resource that did not grow, or
// grew less than the job sped up, cannot explain them.
func TestExplainTimesFromTwoProfiles(t *testing.T) {
	// 3g.20gb → 4g.20gb: the same bandwidth, 4/3 the SMs: only SMs explain a speed-up.
	s, _ := ExplainTimes(job(catalog.SMs, 0, "3g.20gb", "4g.20gb"))
	if s.Resource != catalog.SMs || s.Fixed > 1e-9 || !strings.Contains(s.Why, "1.33× as fast as 3g.20gb with 1.33× the SMs") {
		t.Errorf("3g→4g: %+v", s)
	}
	// 2g.10gb → 3g.20gb twice as fast: 1.5× the SMs cannot do it, 2× the bandwidth can.
	s, _ = ExplainTimes(job(catalog.Bandwidth, 0, "2g.10gb", "3g.20gb"))
	if s.Resource != catalog.Bandwidth || s.Fixed > 1e-9 {
		t.Errorf("2g→3g: %+v", s)
	}
	// 7g.40gb and full differ by 10% in SMs alone: 1% of noise would make a
	// fixed share of a third; times within noise of the SM ratio have none.
	close := job(catalog.SMs, 0, "7g.40gb", "full")
	close[1].Seconds *= 1.01
	s, _ = ExplainTimes(close)
	if sec, _, _, _ := s.Predict(close, a100["1g.5gb"]); s.Resource != catalog.SMs || s.Fixed != 0 || math.Abs(sec/(100*108/14.0)-1) > 0.02 {
		t.Errorf("7g→full with noise: %+v predicts 1g.5gb at %.0f s, want about %.0f", s, sec, 100*108/14.0)
	}
	// Slower on the bigger slice: nothing explains it, and it says so.
	s, _ = ExplainTimes([]Point{{"1g.5gb", a100["1g.5gb"], 100}, {"full", a100["full"], 120}})
	if s.Fixed != 1 || !strings.HasPrefix(s.Why, "neither SMs nor bandwidth explain") {
		t.Errorf("slower when bigger: %+v", s)
	}
	if _, ok := ExplainTimes(job(catalog.SMs, 0, "7g.40gb")); ok {
		t.Error("one profile cannot explain anything")
	}
}

// A range is never narrower than run-to-run noise, holds the prediction,
// and is wider beyond the measured profiles than between them.
func TestPredictRangesAreWiderBeyondTheMeasured(t *testing.T) {
	points := job(catalog.SMs, 0.1, "1g.5gb", "2g.10gb", "4g.20gb")
	s, _ := ExplainTimes(points)
	sec, lo, hi, from := s.Predict(points, a100["3g.20gb"])
	if from.Profile != "4g.20gb" && from.Profile != "2g.10gb" || lo > sec*math.Exp(-runNoise)+1e-9 || hi < sec*math.Exp(runNoise)-1e-9 {
		t.Errorf("3g.20gb: %.1f in [%.1f, %.1f] from %s", sec, lo, hi, from.Profile)
	}
	upSec, upLo, upHi, _ := s.Predict(points, a100["full"])
	if upHi/upLo <= hi/lo || upLo > upSec || upHi < upSec {
		t.Errorf("full (beyond the measured): [%.1f, %.1f] around %.1f is no wider than 3g.20gb's [%.1f, %.1f]", upLo, upHi, upSec, lo, hi)
	}
}

func TestPriorScalingFromUtilization(t *testing.T) {
	site := testutil.Wulver(t)
	full := job(catalog.SMs, 0, "full")
	for u, want := range map[float64]float64{100: 0, 50: 0.5, 10: 0.9} {
		if s := PriorScaling(site, u, full); math.Abs(s.Fixed-want) > 1e-9 || s.Resource != catalog.SMs || !strings.Contains(s.Why, "busy") {
			t.Errorf("utilization %.0f%% on the whole GPU: %+v, want fixed share %.1f", u, s, want)
		}
	}
	// Busy half the time on a slice of 1/8: the fixed part is 1/(1/8+1) of the whole-GPU time... 8/9 of it.
	small := []Point{{Profile: "x", Shares: catalog.Shares{SM: 0.125, Bandwidth: 0.125}, Seconds: 10}}
	if s := PriorScaling(site, 50, small); math.Abs(s.Fixed-8.0/9) > 1e-9 {
		t.Errorf("half busy on 1/8: %+v", s)
	}
	ref := PriorScaling(site, -1, full)
	if !strings.Contains(ref.Source, "median of 5 wulver reference benchmarks") || ref.Fixed <= 0.3 || ref.Fixed >= 0.95 {
		t.Errorf("reference prior: %+v", ref)
	}
	if got := ReferencePrior(site, "pytorch_mnist_simplecnn"); !strings.Contains(got.Source, "median of 4") {
		t.Errorf("excluding one benchmark: %+v", got)
	}
}

// A calibrated range holds most held-out times: scored on each reference
// benchmark with that benchmark left out of the calibration.
func TestRangesCoverHeldOutReferenceTimes(t *testing.T) {
	site := testutil.Wulver(t)
	set, _ := catalog.ReferenceFor(site)
	in, n := 0, 0
	for i := range set.Benchmarks {
		b := &set.Benchmarks[i]
		if !b.IsPrior() {
			continue
		}
		points := BenchmarkPoints(site, b)
		for j, held := range points {
			rest := append(append([]Point{}, points[:j]...), points[j+1:]...)
			for a := range rest {
				for c := a + 1; c < len(rest); c++ {
					s, _ := ExplainTimes([]Point{rest[a], rest[c]})
					_, lo, hi, _ := s.Excluding(b.Name).Predict([]Point{rest[a], rest[c]}, held.Shares)
					if lo <= held.Seconds && held.Seconds <= hi {
						in++
					}
					n++
				}
			}
		}
	}
	t.Logf("two profiles known: %d of %d held-out times in range", in, n)
	if n != 33 || float64(in) < 0.6*float64(n) {
		t.Errorf("%d of %d held-out times in range", in, n)
	}
}
