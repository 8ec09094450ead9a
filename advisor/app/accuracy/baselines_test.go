package accuracy

import (
	"fmt"
	"math"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
)

// lawCase is a job whose time on each Wulver profile is 100 × time(shares).
func lawCase(site *catalog.Site, name string, time func(catalog.Shares) float64) Case {
	c := Case{Name: name}
	for _, profile := range []string{"1g.10gb", "2g.20gb", "3g.40gb", "full"} {
		p, _ := site.Profile(profile)
		c.Points = append(c.Points, point(site, profile, 100*time(site.Shares(p))))
	}
	return c
}

func amdahl(f float64) func(catalog.Shares) float64 {
	return func(s catalog.Shares) float64 { return f + (1-f)/s.SM }
}

// Each baseline is exact on a job that follows its law, under every
// protocol, and misses one that follows another's.
func TestEachBaselineIsExactOnItsOwnLaw(t *testing.T) {
	site := catalogtest.Wulver(t)
	sqrtSM := lawCase(site, "sqrt", func(s catalog.Shares) float64 { return 1 / math.Sqrt(s.SM) })
	bandwidth := lawCase(site, "bandwidth", func(s catalog.Shares) float64 { return 1 / s.Bandwidth })
	smBound := lawCase(site, "sm", amdahl(0))
	// Peers with a fixed share of 0.3, and a case with it too.
	fixed := []Case{lawCase(site, "a", amdahl(0.3)), lawCase(site, "b", amdahl(0.3)), lawCase(site, "c", amdahl(0.3))}
	for _, c := range []struct {
		pred        Predictor
		exact, miss []Case
	}{
		{Naive, []Case{smBound}, []Case{sqrtSM}},
		{SqrtSM, []Case{sqrtSM}, []Case{smBound}},
		{BandwidthShare, []Case{bandwidth}, []Case{smBound}},
		{PeersFixed{site, fixed}, fixed, nil},
		{PeersFixed{site, append([]Case{smBound}, fixed...)}, nil, []Case{smBound}}, // its peers are not SM-bound
	} {
		for _, p := range []Protocol{LeaveOneOut, TwoKnown, OneKnown} {
			if s := Evaluate(c.pred, c.exact, p); c.exact != nil && (s.Trials == 0 || s.MAPE > 1e-9) {
				t.Errorf("%s, %s: %+v on its own law", c.pred.Name(), p, s)
			}
			if s := Evaluate(c.pred, c.miss, p); c.miss != nil && s.MAPE < 5 {
				t.Errorf("%s, %s: %.2f%% on another law", c.pred.Name(), p, s.MAPE)
			}
			if s := Evaluate(c.pred, c.exact, p); s.Covered != nil || s.Width != nil {
				t.Errorf("%s prints no range: %+v", c.pred.Name(), s)
			}
		}
	}
}

// Each baseline scales the known profile nearest the target in its own
// share, however many are known: never a fit.
func TestBaselinesScaleTheNearestKnownProfile(t *testing.T) {
	site := catalogtest.Wulver(t)
	peers := []Case{lawCase(site, "peer", amdahl(0.5)), lawCase(site, "peer2", amdahl(0.5))}
	job := Case{Name: "job"}
	known := []runmodel.Point{point(site, "1g.10gb", 800), point(site, "3g.40gb", 300)}
	g := func(s float64) float64 { return 0.5 + 0.5/s }
	for _, c := range []struct {
		pred   Predictor
		target string
		want   float64
	}{
		// 2g.20gb's SMs are 2× 1g.10gb's, 0.67× 3g.40gb's: 3g.40gb is nearer.
		{Naive, "2g.20gb", 300 * 42.0 / 28},
		{SqrtSM, "2g.20gb", 300 * math.Sqrt(42.0/28)},
		// Its bandwidth is 2× 1g.10gb's and 0.5× 3g.40gb's: the first known of the two.
		{BandwidthShare, "2g.20gb", 800 * 0.125 / 0.25},
		{Naive, "full", 300 * 42.0 / 108},
		{BandwidthShare, "full", 300 * 0.5},
		{PeersFixed{site, append(peers, job)}, "full", 300 * g(1) / g(42.0/108)},
	} {
		target := point(site, c.target, 1)
		got, lo, hi, ok := c.pred.Predict(job, known, target)
		if !ok || math.Abs(got/c.want-1) > 1e-9 || lo != got || hi != got {
			t.Errorf("%s on %s: %g (%g–%g, %v), want %g", c.pred.Name(), c.target, got, lo, hi, ok, c.want)
		}
	}
	if _, _, _, ok := Naive.Predict(job, nil, point(site, "full", 1)); ok {
		t.Error("a prediction from no known profile")
	}
}

// From one known profile the peers' baseline is the model's point
// prediction: the model's prior is that rule, with a range.
func TestPeersFixedIsTheModelsPriorFromOneProfile(t *testing.T) {
	site := catalogtest.Wulver(t)
	var cases []Case
	for i, f := range []float64{0.1, 0.4, 0.6, 0.2} {
		c := lawCase(site, fmt.Sprintf("job%d", i), amdahl(f))
		c.Points[2].Seconds *= 1.1 // no law exactly
		cases = append(cases, c)
	}
	model, peers := Model{site, cases}, PeersFixed{site, cases}
	for _, c := range cases {
		for _, tr := range Trials(OneKnown, c) {
			m, lo, hi, _ := model.Predict(c, tr.Known, tr.Target)
			p, _, _, _ := peers.Predict(c, tr.Known, tr.Target)
			if math.Abs(m/p-1) > 1e-9 || !(lo < m && m < hi) {
				t.Errorf("%s on %s from %s: the model %g (%g–%g), the peers' baseline %g", c.Name, tr.Target.Profile, tr.Known[0].Profile, m, lo, hi, p)
			}
		}
	}
}
