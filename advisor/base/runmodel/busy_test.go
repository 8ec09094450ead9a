package runmodel

import (
	"math"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
)

// A job fed by one CPU, emulated on an H100 for an A100 site: 6 s of CPU
// time beside 1.9 s of the whole A100's GPU time, at the shares of the A100
// each emulated slice had (0.42 to 3.4 A100s). Its wall times carry the
// noise such runs have (up to a fifth), which hides the GPU part; its busy
// times do not. On the A100's 1g.10gb the job takes (6 + 1.9·7) s, 1.85× its
// 3g.40gb's.
func cpuFedJob(noise []float64) []Point {
	const idle, gpu = 6.0, 1.9
	var points []Point
	for i, sm := range []float64{0.42, 0.88, 1.30, 3.43} {
		busy := gpu / sm
		points = append(points, Point{Profile: []string{"1g.10gb", "2g.20gb", "3g.40gb", "full"}[i],
			Shares: catalog.Shares{SM: sm, Bandwidth: sm / 2}, Seconds: (idle + busy) * noise[i], Busy: busy})
	}
	return points
}

func ratioOn(t *testing.T, s Scaling, points []Point, a, b string) float64 {
	t.Helper()
	site := catalogtest.Wulver(t)
	at := func(name string) float64 {
		p, ok := site.Profile(name)
		if !ok {
			t.Fatalf("no profile %s", name)
		}
		sec, _, _, _ := s.Predict(points, site.Shares(p))
		return sec
	}
	return at(a) / at(b)
}

func TestBusyTimeRevealsTheGPUPartNoiseHides(t *testing.T) {
	want := (6 + 1.9*7) / (6 + 1.9*7/3.0)
	for _, noise := range [][]float64{{1, 1, 1, 1}, {1, 1.1, 1.2, 1.4}, {0.9, 1.15, 1, 1.2}} {
		points := cpuFedJob(noise)
		s, ok := ExplainEmulated(catalog.SMs, points, References{})
		if !ok {
			t.Fatal("no explanation")
		}
		if got := ratioOn(t, s, points, "1g.10gb", "3g.40gb"); math.Abs(got/want-1) > 0.05 {
			t.Errorf("noise %v: 1g.10gb %.2f× 3g.40gb, want %.2f (%s; %s)", noise, got, want, s.Source, s.Why)
		}
		if !strings.Contains(s.Why, "busy") || !strings.Contains(s.Source, "busy and idle") {
			t.Errorf("the reason does not say what it rests on: %s / %s", s.Source, s.Why)
		}
	}
	// The wall times alone, with that noise, see almost no GPU part.
	points := cpuFedJob([]float64{1, 1.1, 1.2, 1.4})
	alone, _ := ExplainTimesOn(catalog.SMs, points, References{})
	if got := ratioOn(t, alone, points, "1g.10gb", "3g.40gb"); got > 0.9*want {
		t.Errorf("the times alone: %.2f×; the test's noise no longer hides the GPU part", got)
	}
}

// A job the GPU is busy for throughout is explained as its times alone
// explain it; a point without its busy time leaves them to the times.
func TestBusyTimeOfAGPUBoundJob(t *testing.T) {
	var points []Point
	for _, sm := range []float64{0.42, 0.88, 1.30} {
		sec := 100 * (0.1 + 0.9/sm)
		points = append(points, Point{Profile: "x", Shares: catalog.Shares{SM: sm, Bandwidth: sm}, Seconds: sec, Busy: 0.99 * sec})
	}
	points[1].Profile, points[2].Profile = "y", "z"
	s, ok := ExplainWithBusy(catalog.SMs, points, References{})
	alone, _ := ExplainTimesOn(catalog.SMs, points, References{})
	if !ok || math.Abs(s.Fixed-alone.Fixed) > 0.02 {
		t.Errorf("busy throughout: fixed %.3f, the times alone %.3f", s.Fixed, alone.Fixed)
	}
	points[1].Busy = 0
	if _, ok := ExplainWithBusy(catalog.SMs, points, References{}); ok {
		t.Error("explained by busy time with a profile that lacks it")
	}
	if s, ok := ExplainEmulated(catalog.SMs, points, References{}); !ok || s.Fixed != alone.Fixed {
		t.Errorf("without every busy time: %+v, want the times' own %+v", s, alone)
	}
}

// A busy part with a floor (it gains nothing beyond 0.7 of the site's GPU)
// and an idle part: the prediction is the idle time plus the busy time at
// min(share, 0.7), also far below the smallest slice measured.
func TestBusyTimeWithAFloor(t *testing.T) {
	const idle, gpu, floor = 4.0, 2.0, 0.7
	truth := func(sm float64) float64 { return idle + gpu/math.Min(sm, floor) }
	var points []Point
	for i, sm := range []float64{0.45, 0.6, 1.3, 3.4} {
		points = append(points, Point{Profile: []string{"a", "b", "c", "d"}[i], Shares: catalog.Shares{SM: sm, Bandwidth: sm},
			Seconds: truth(sm), Busy: gpu / math.Min(sm, floor)})
	}
	s, ok := ExplainWithBusy(catalog.SMs, points, References{})
	if !ok || s.Limit == 0 {
		t.Fatalf("no floor: %+v, %v", s, ok)
	}
	for _, sm := range []float64{0.1, 1.0 / 7, 3.0 / 7, 1} {
		got, _, _, _ := s.Predict(points, catalog.Shares{SM: sm, Bandwidth: sm})
		if math.Abs(got/truth(sm)-1) > 0.03 {
			t.Errorf("at %.2f of the SMs: %.2f s, want %.2f (%s; %s)", sm, got, truth(sm), s.Form(), s.Source)
		}
	}
	if f := s.Form(); !strings.Contains(f, "Amdahl in min(share, 0.70)") {
		t.Errorf("form: %s", f)
	}
}

// A GPU busy a few percent of the time whose busy time does not fall on a
// bigger slice says nothing of how the job scales: its times explain it.
func TestBusyTimeThatDoesNotFall(t *testing.T) {
	points := []Point{
		{Profile: "a", Shares: catalog.Shares{SM: 0.4, Bandwidth: 0.4}, Seconds: 30, Busy: 0.5},
		{Profile: "b", Shares: catalog.Shares{SM: 1.3, Bandwidth: 1.3}, Seconds: 20, Busy: 0.6},
	}
	if s, ok := ExplainWithBusy(catalog.SMs, points, References{}); ok {
		t.Errorf("explained by a busy time that rose: %+v", s)
	}
}
