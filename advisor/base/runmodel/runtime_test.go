package runmodel

import (
	"flag"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
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
	}{{catalog.SMs, 0}, {catalog.SMs, 0.2}, {catalog.Bandwidth, 0.3}, {catalog.Mixed, 0.3}} {
		s, ok := ExplainTimes(job(tc.r, tc.f, known...), References{})
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

// A job whose other work overlaps the GPU's (CPU threads beside its
// kernels) gains with the SMs until that work is the longer, then nothing:
// the overlapped explanation wins, and predicts the floor and the slope.
func TestExplainTimesSeesAJobStopGaining(t *testing.T) {
	var points []Point
	for _, name := range []string{"1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "full"} {
		sh := a100[name]
		points = append(points, Point{Profile: name, Shares: sh, Seconds: math.Max(40/sh.SM, 120)})
	}
	s, ok := ExplainTimes(points, References{})
	if !ok || s.Resource != catalog.SMs || math.Abs(s.Limit-40.0/120) > 1e-6 || !strings.Contains(s.Why, "up to about 33% of them, then by something else") {
		t.Fatalf("%+v", s)
	}
	if sec, _, _, _ := s.Predict(points, a100["7g.40gb"]); math.Abs(sec-120) > 1e-6 {
		t.Errorf("7g.40gb: %.1f s, want the floor, 120 s", sec)
	}
	// Noise on the whole GPU is not a floor: a compute-bound job 2% slow there stays bound by SMs alone.
	sm := job(catalog.SMs, 0, "1g.5gb", "2g.10gb", "3g.20gb", "full")
	sm[3].Seconds *= 1.02
	if s, _ := ExplainTimes(sm, References{}); s.Limit != 0 || s.Resource != catalog.SMs {
		t.Errorf("2%% of noise made a floor: %+v", s)
	}
}

// With two profiles every resource fits them exactly; the one that needs
// the least fixed share is the bottleneck. A resource that did not grow, or
// grew less than the job sped up, cannot explain them.
func TestExplainTimesFromTwoProfiles(t *testing.T) {
	// 3g.20gb → 4g.20gb: the same bandwidth, 4/3 the SMs: only SMs explain a speed-up.
	s, _ := ExplainTimes(job(catalog.SMs, 0, "3g.20gb", "4g.20gb"), References{})
	if s.Resource != catalog.SMs || s.Fixed > 1e-9 || !strings.Contains(s.Why, "1.33× as fast as 3g.20gb with 1.33× the SMs") {
		t.Errorf("3g→4g: %+v", s)
	}
	// 2g.10gb → 3g.20gb twice as fast: 1.5× the SMs cannot do it, 2× the bandwidth can.
	s, _ = ExplainTimes(job(catalog.Bandwidth, 0, "2g.10gb", "3g.20gb"), References{})
	if s.Resource != catalog.Bandwidth || s.Fixed > 1e-9 {
		t.Errorf("2g→3g: %+v", s)
	}
	// 7g.40gb and full differ by 10% in SMs alone: 1% of noise would make a
	// fixed share of a third; times within noise of the SM ratio have none.
	close := job(catalog.SMs, 0, "7g.40gb", "full")
	close[1].Seconds *= 1.01
	s, _ = ExplainTimes(close, References{})
	if sec, _, _, _ := s.Predict(close, a100["1g.5gb"]); s.Resource != catalog.SMs || s.Fixed != 0 || math.Abs(sec/(100*108/14.0)-1) > 0.02 {
		t.Errorf("7g→full with noise: %+v predicts 1g.5gb at %.0f s, want about %.0f", s, sec, 100*108/14.0)
	}
	// Slower on the bigger slice: nothing explains it, and it says so.
	s, _ = ExplainTimes([]Point{{Profile: "1g.5gb", Shares: a100["1g.5gb"], Seconds: 100}, {Profile: "full", Shares: a100["full"], Seconds: 120}}, References{})
	if s.Fixed != 1 || !strings.HasPrefix(s.Why, "neither SMs nor bandwidth explain") {
		t.Errorf("slower when bigger: %+v", s)
	}
	if _, ok := ExplainTimes(job(catalog.SMs, 0, "7g.40gb"), References{}); ok {
		t.Error("one profile cannot explain anything")
	}
}

// Two times fit every explanation exactly; the site's reference benchmarks
// measured on the same two profiles say which has held there. A job that
// stops gaining after 3g.40gb, measured on 3g.40gb and the whole GPU, looks
// like one with a large fixed share; Wulver's GROMACS and LLM tables, the
// two measured on both, stopped gaining too.
func TestTwoProfilesLearnFromTheSitesBenchmarks(t *testing.T) {
	site := catalogtest.Wulver(t)
	point := func(name string) Point {
		p, _ := site.Profile(name)
		sh := site.Shares(p)
		return Point{Profile: name, Shares: sh, Seconds: math.Max(60/sh.SM, 150)}
	}
	known := []Point{point("3g.40gb"), point("full")}
	want := point("1g.10gb")
	learned, _ := ExplainTimes(known, ReferencesOf(site))
	alone, _ := ExplainTimes(known, References{})
	got := func(s Scaling) float64 { sec, _, _, _ := s.Predict(known, want.Shares); return sec / want.Seconds }
	if math.Abs(got(learned)-1) > 0.05 ||
		!strings.Contains(learned.Why, "wulver reference benchmarks measured on 3g.40gb and full") {
		t.Errorf("with the site's benchmarks: %+v predicts 1g.10gb at %.2f× its time", learned, got(learned))
	}
	if got(alone) > 0.7 {
		t.Errorf("without them the bottleneck rule was expected to predict 1g.10gb far too fast, not %.2f×: %+v", got(alone), alone)
	}
}

// A range is never narrower than run-to-run noise, holds the prediction,
// and is wider beyond the measured profiles than between them.
func TestPredictRangesAreWiderBeyondTheMeasured(t *testing.T) {
	points := job(catalog.SMs, 0.1, "1g.5gb", "2g.10gb", "4g.20gb")
	s, _ := ExplainTimes(points, References{})
	sec, lo, hi, from := s.Predict(points, a100["3g.20gb"])
	if from.Profile != "4g.20gb" && from.Profile != "2g.10gb" || lo > sec*math.Exp(-RunNoise)+1e-9 || hi < sec*math.Exp(RunNoise)-1e-9 {
		t.Errorf("3g.20gb: %.1f in [%.1f, %.1f] from %s", sec, lo, hi, from.Profile)
	}
	upSec, upLo, upHi, _ := s.Predict(points, a100["full"])
	if upHi/upLo <= hi/lo || upLo > upSec || upHi < upSec {
		t.Errorf("full (beyond the measured): [%.1f, %.1f] around %.1f is no wider than 3g.20gb's [%.1f, %.1f]", upLo, upHi, upSec, lo, hi)
	}
}

func TestPriorScalingFromUtilization(t *testing.T) {
	site := catalogtest.Wulver(t)
	full := job(catalog.SMs, 0, "full")
	for u, want := range map[float64]float64{100: 0, 50: 0.5, 10: 0.9} {
		if s := PriorScaling(ReferencesOf(site), u, -1, full); math.Abs(s.Fixed-want) > 1e-9 || s.Resource != catalog.SMs || !strings.Contains(s.Why, "busy") {
			t.Errorf("utilization %.0f%% on the whole GPU: %+v, want fixed share %.1f", u, s, want)
		}
	}
	// Busy half the time on a slice of 1/8: the fixed part is 1/(1/8+1) of the whole-GPU time... 8/9 of it.
	small := []Point{{Profile: "x", Shares: catalog.Shares{SM: 0.125, Bandwidth: 0.125}, Seconds: 10}}
	if s := PriorScaling(ReferencesOf(site), 50, -1, small); math.Abs(s.Fixed-8.0/9) > 1e-9 {
		t.Errorf("half busy on 1/8: %+v", s)
	}
	ref := PriorScaling(ReferencesOf(site), -1, -1, full)
	if !strings.Contains(ref.Source, "median of 5 wulver reference benchmarks") || ref.Fixed <= 0.3 || ref.Fixed >= 0.95 {
		t.Errorf("reference prior: %+v", ref)
	}
	if got := ReferencesOf(site, "pytorch_mnist_simplecnn").Prior(); !strings.Contains(got.Source, "median of 4") {
		t.Errorf("excluding one benchmark: %+v", got)
	}
	// A guess from the site's typical job may be wrong about a compute-bound
	// one: its range reaches the time of a job bound by SMs alone.
	p, _ := site.Profile("1g.10gb")
	one := []Point{{Profile: "1g.10gb", Shares: site.Shares(p), Seconds: 1000}}
	if _, lo, _, _ := ref.Predict(one, catalog.Shares{SM: 1, Bandwidth: 1}); lo > 1000*14.0/108+1e-9 {
		t.Errorf("full from 1g.10gb: the range starts at %.0f s, above the SM-bound %.0f s", lo, 1000*14.0/108)
	}
	if _, lo, _, _ := PriorScaling(ReferencesOf(site), 30, -1, one).Predict(one, catalog.Shares{SM: 1, Bandwidth: 1}); lo <= 1000*14.0/108 {
		t.Errorf("a monitored run's prior is no guess: its range need not reach the SM-bound time, yet starts at %.0f s", lo)
	}
}

// A job that looks like one of the site's reference benchmarks, measured
// on the whole GPU alone, is scaled as that benchmark scaled, its GPU's
// utilization a bound on how much of its time scales: GROMACS busy 90% of
// the time still runs 3g.40gb 1.03× as long as the whole GPU (the bound,
// 2.41×, does not bind), and a job that looks like the LLM fine-tuning but
// kept its GPU busy 10% of the time runs 1g.10gb at most 1.67× as long,
// not the 4.09× the benchmark did. Its range holds no time the bound rules
// out on the fast side, as a guess's reaches a job bound by SMs alone.
func TestPriorScalingBoundsTheBenchmarkByUtilization(t *testing.T) {
	site := catalogtest.Wulver(t)
	set, _ := catalog.ReferenceFor(site)
	at := func(profile string) catalog.Shares {
		p, _ := site.Profile(profile)
		return site.Shares(p)
	}
	full := []Point{{Profile: "full", Shares: at("full"), Seconds: 100}}
	gmx, _ := set.Benchmark("gromacs_performance")
	s := PriorScaling(ReferencesOf(site).Like(gmx), 90, -1, full)
	if sec, _, _, _ := s.Predict(full, at("3g.40gb")); math.Abs(sec/102.7-1) > 0.03 || !strings.Contains(s.Why, "gromacs_performance") {
		t.Errorf("GROMACS busy 90%%: 3g.40gb %.0f s, want about 103 as its table has it (%s)", sec, s.Why)
	}
	llm, _ := set.Benchmark("llm-finetuning")
	s = PriorScaling(ReferencesOf(site).Like(llm), 10, -1, full)
	bound := 100 * (0.9 + 0.1/at("1g.10gb").Of(s.Resource)) // in the benchmark's own form: its resource
	sec, _, _, _ := s.Predict(full, at("1g.10gb"))
	if math.Abs(sec/bound-1) > 1e-6 || !strings.Contains(s.Why, "llm-finetuning") || !strings.Contains(s.Why, "busy only 10% of the time on full") {
		t.Errorf("busy 10%% like the LLM fine-tuning: 1g.10gb %.0f s, want the bound %.0f (%s)", sec, bound, s.Why)
	}
	if _, lo, _, _ := s.Predict([]Point{{Profile: "1g.10gb", Shares: at("1g.10gb"), Seconds: 1000}}, at("full")); lo <= 1000*at("1g.10gb").SM {
		t.Errorf("the range reaches the SM-bound time, %.0f s, which the utilization rules out", lo)
	}
	// Less busy than the benchmark allows, the benchmark stands as it is.
	if a, b := PriorScaling(ReferencesOf(site).Like(llm), 100, -1, full), ReferencesOf(site).Like(llm).Prior(); a.Fixed != b.Fixed || a.Why != b.Why {
		t.Errorf("busy all the time: %+v, the benchmark's %+v", a, b)
	}
}

// GROMACS busy 34% of the time on the whole GPU, as Slurm's gres/gpuutil
// sees it: the utilization allows up to (1 − 0.34) + 0.34·108/14 = 3.3× on
// 1g.10gb, and Wulver's table has 2.74×, so the table stands. Read against
// the benchmark's fitted floor (busy time scaling only below 36% of the
// SMs), the same utilization would have allowed 1.6×, counting the job's
// idle time on top of the benchmark's own. The range's slow end reaches
// the bound, not a job bound by SMs alone (7.7×).
func TestPriorScalingBoundsOnTheRawShares(t *testing.T) {
	site := catalogtest.Wulver(t)
	set, _ := catalog.ReferenceFor(site)
	gmx, _ := set.Benchmark("gromacs_performance")
	at := func(profile string) catalog.Shares {
		p, _ := site.Profile(profile)
		return site.Shares(p)
	}
	full := []Point{{Profile: "full", Shares: at("full"), Seconds: 100}}
	s := PriorScaling(ReferencesOf(site).Like(gmx), 34, -1, full)
	sec, _, hi, _ := s.Predict(full, at("1g.10gb"))
	if math.Abs(sec/274-1) > 0.05 || strings.Contains(s.Why, "busy only") {
		t.Errorf("GROMACS busy 34%%: 1g.10gb %.0f s, want about 274 as its table has it (%s)", sec, s.Why)
	}
	if bound := 100 * (0.66 + 0.34/at("1g.10gb").Of(s.Resource)); hi > bound+1e-6 {
		t.Errorf("1g.10gb's range reaches %.0f s, beyond the %.0f s the utilization allows", hi, bound)
	}
}

// A job like the LLM fine-tuning, measured on 1g.10gb alone, is predicted
// on 2g.20gb as Wulver's table has that benchmark there: 0.556 h against
// 1.092 h, 0.51×. The form fitted to the table's four profiles (bound by
// bandwidth, 12% off its own times) would give 0.56×, and would price
// 2g.20gb within the noise of 1g.10gb, where the table has it 15% cheaper.
// A profile the table lacks takes the form's time.
func TestPriorScalingTakesTheBenchmarksOwnRatios(t *testing.T) {
	site := catalogtest.Wulver(t)
	set, _ := catalog.ReferenceFor(site)
	llm, _ := set.Benchmark("llm-finetuning")
	at := func(profile string) catalog.Shares {
		p, _ := site.Profile(profile)
		return site.Shares(p)
	}
	one := []Point{{Profile: "1g.10gb", Shares: at("1g.10gb"), Seconds: 1000}}
	s := ReferencesOf(site).Like(llm).Prior()
	small, _ := llm.Row("1g.10gb")
	for _, profile := range []string{"2g.20gb", "3g.40gb", "full"} {
		row, _ := llm.Row(profile)
		want := 1000 * row.Seconds / small.Seconds
		if sec, _, _, _ := s.Predict(one, at(profile)); math.Abs(sec/want-1) > 1e-6 {
			t.Errorf("%s: %.0f s, want %.0f as the table has it (%s)", profile, sec, want, s.Why)
		}
	}
	other := catalog.Shares{SM: 0.5, Bandwidth: 0.5}
	if sec, _, _, _ := s.Predict(one, other); math.Abs(sec/s.scale(one[0], other, s.Fixed)-1) > 1e-9 {
		t.Errorf("a profile the table lacks: %.0f s, not the form's", sec)
	}
}

// A run that reached its time limit on a smaller slice after longer than
// the table's ratio allows proves the job slower there than the benchmark:
// the form, its fixed share lowered to meet the bound, takes the table's
// place.
func TestWithinSetsTheTableAsideForABound(t *testing.T) {
	site := catalogtest.Wulver(t)
	set, _ := catalog.ReferenceFor(site)
	llm, _ := set.Benchmark("llm-finetuning")
	at := func(profile string) catalog.Shares {
		p, _ := site.Profile(profile)
		return site.Shares(p)
	}
	full := []Point{{Profile: "full", Shares: at("full"), Seconds: 100}}
	s := ReferencesOf(site).Like(llm).Prior()
	if sec, _, _, _ := s.Predict(full, at("1g.10gb")); sec >= 500 {
		t.Fatalf("the table's 1g.10gb is %.0f s, not under the bound", sec)
	}
	bounded := s.Within(full, []Point{{Profile: "1g.10gb", Shares: at("1g.10gb"), Seconds: 500}})
	if sec, _, _, _ := bounded.Predict(full, at("1g.10gb")); sec < 500*(1-1e-6) {
		t.Errorf("1g.10gb %.0f s, under the 500 s a run there reached its limit after (%s)", sec, bounded.Source)
	}
}

// A calibrated range holds most held-out times: scored on each reference
// benchmark with that benchmark left out of the calibration.
func TestRangesCoverHeldOutReferenceTimes(t *testing.T) {
	site := catalogtest.Wulver(t)
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
					s, _ := ExplainTimes([]Point{rest[a], rest[c]}, ReferencesOf(site, b.Name))
					_, lo, hi, _ := s.Predict([]Point{rest[a], rest[c]}, held.Shares)
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

// The utilization prior on real measurements: four workloads on an H100,
// whole and with its SMs limited by MPS (testdata/nvml/h100-mps-scaling.csv;
// bandwidth is not limited). The GEMM's own slowdown is the effective SM
// share; the prior, from the utilization seen on the whole GPU alone, must
// predict the others' slowdown better than time ∝ 1/SMs. The copy, bound by
// bandwidth on the whole GPU (which MPS leaves whole), becomes bound by the
// SMs below about half of them: one resource at a time cannot say that,
// so it is only logged.
func TestUtilizationPriorOnAnH100(t *testing.T) {
	type row struct{ util, mem, rate float64 }
	rows := map[string]map[float64]row{}
	data, err := os.ReadFile("../../../testdata/nvml/h100-mps-scaling.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n")[2:] {
		var pct, u, m, samples, rate float64
		var name string
		f := strings.Split(line, ",")
		if len(f) != 6 {
			continue
		}
		name = f[1]
		for i, p := range []*float64{&pct, nil, &u, &m, &samples, &rate} {
			if p != nil {
				*p, _ = strconv.ParseFloat(f[i], 64)
			}
		}
		if rows[name] == nil {
			rows[name] = map[float64]row{}
		}
		rows[name][pct] = row{u, m, rate}
	}
	site := catalogtest.Wulver(t)
	whole := []Point{{Profile: "full", Shares: catalog.Shares{SM: 1, Bandwidth: 1}, Seconds: 1}}
	prior := func(name string) Scaling {
		r := rows[name][100]
		return PriorScaling(ReferencesOf(site), r.util, r.mem, whole)
	}
	if r := prior("gemm_fp16_8192").Resource; r != catalog.SMs {
		t.Errorf("the GEMM is taken to be bound by %s", r)
	}
	if r := prior("copy_4gib").Resource; r != catalog.Bandwidth {
		t.Errorf("the copy is taken to be bound by %s", r)
	}
	for _, pct := range []float64{12, 24, 45} {
		share := rows["gemm_fp16_8192"][pct].rate / rows["gemm_fp16_8192"][100].rate
		for _, name := range []string{"gemm_with_cpu_sleep", "small_mlp_batch32", "copy_4gib"} {
			measured := rows[name][pct].rate / rows[name][100].rate
			sec, _, _, _ := prior(name).Predict(whole, catalog.Shares{SM: share, Bandwidth: 1})
			predicted := 1 / sec
			errPrior, errNaive := math.Abs(math.Log(predicted/measured)), math.Abs(math.Log(share/measured))
			t.Logf("%-20s at %2.0f%% (SM share %.2f): measured %.2f of the whole GPU's rate, prior %.2f, naive %.2f", name, pct, share, measured, predicted, share)
			if errPrior >= errNaive && name != "copy_4gib" {
				t.Errorf("%s at %.0f%%: the prior (%.2f) is no closer than the naive model (%.2f) to %.2f", name, pct, predicted, share, measured)
			}
			if name == "gemm_with_cpu_sleep" && errPrior > math.Log(1.15) {
				t.Errorf("%s at %.0f%%: predicted %.2f, measured %.2f", name, pct, predicted, measured)
			}
		}
	}
}

var updateCalibration = flag.Bool("update", false, "rewrite advisor/base/runmodel/calibration.json from the built-in reference benchmarks")

// The embedded calibration is what the model and the references give
// today: after changing either, run go test ./advisor/base/runmodel -run TestBuiltinCalibration -update.
func TestBuiltinCalibration(t *testing.T) {
	live := computeCalibration("")
	if *updateCalibration {
		data, err := encodeCalibration(live)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("calibration.json", append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	embedded := builtinCalibration()
	for k, errs := range live {
		got := embedded[k]
		if len(got) != len(errs) {
			t.Fatalf("%s: %d errors embedded, %d computed: run go test ./advisor/base/runmodel -run TestBuiltinCalibration -update", k, len(got), len(errs))
		}
		for i := range errs {
			if math.Abs(got[i]-errs[i]) > 1e-9 {
				t.Fatalf("%s: embedded %g, computed %g: run go test ./advisor/base/runmodel -run TestBuiltinCalibration -update", k, got[i], errs[i])
			}
		}
	}
	if len(live[cell{above, false}]) == 0 || len(live[cell{below, true}]) == 0 {
		t.Errorf("the reference trials left cells empty: %v", live)
	}
}

func TestASliceIsPredictedNoFasterThanABiggerMeasuredProfile(t *testing.T) {
	// Seen: "1g.10gb 00:53:12–02:54:14" beside full's runs of 01:26:59 to
	// 01:46:26: the calibration's band reached below the whole GPU's time.
	site := catalogtest.Wulver(t)
	full, _ := site.Profile("full")
	measured := []Point{{Profile: "full", Shares: site.Shares(full), Seconds: 3600}}
	s := ReferencesOf(site).Prior()
	for _, p := range site.Profiles {
		if p.Name == "full" {
			continue
		}
		sec, lo, _, _ := s.Predict(measured, site.Shares(&p))
		if sec < 3600 || lo < 3600 {
			t.Errorf("%s: %.0f s, range from %.0f s, below full's 3600 s", p.Name, sec, lo)
		}
	}
	emulated := []Point{{Profile: "full", Shares: site.Shares(full), Seconds: 3600, Emulated: true}}
	one, _ := site.Profile("1g.10gb")
	if _, lo, _, _ := s.Predict(emulated, site.Shares(one)); lo >= 3600 {
		t.Errorf("an emulated time bounds a real slice's: range from %.0f s", lo)
	}
}
