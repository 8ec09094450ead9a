package accuracy

import (
	"testing"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/testutil"
)

// synthetic is a job of Amdahl form on one basis: 100 s on the whole GPU,
// a fixed share f.
func synthetic(site *catalog.Site, b Basis, f float64) Case {
	c := Case{Name: "synthetic " + b.String()}
	for _, p := range site.Profiles {
		share := b.share(site, p.Name)
		c.Points = append(c.Points, point(site, p.Name, 100*(f+(1-f)/share)))
	}
	return c
}

// Each basis wins on a job it describes: the candidate picks it from the
// job's own runs and predicts the held-out profile exactly, where the mix
// alone does not.
func TestCandidatePicksTheBasisThatBoundsTheJob(t *testing.T) {
	site := testutil.Wulver(t)
	for _, tc := range []struct {
		basis Basis
		fixed float64
	}{{BasisSM, 0}, {BasisBandwidth, 0}, {BasisSM, 0.3}, {BasisMix, 0.5}} {
		c := synthetic(site, tc.basis, tc.fixed)
		f, ok := Candidate{site}.choose(c.Points[:3])
		if !ok || f.basis != tc.basis {
			t.Errorf("%s, f=%.1f: chose %s (%v)", tc.basis, tc.fixed, f.basis, ok)
		}
		s := Evaluate(Candidate{site}, LeaveOneOut, []Case{c})
		if s.MAPE > 0.5 {
			t.Errorf("%s, f=%.1f: leave one out %.2f%%", tc.basis, tc.fixed, s.MAPE)
		}
	}
	// Two profiles of a job bound by SMs alone: the simplest explanation.
	sm := synthetic(site, BasisSM, 0)
	if f, ok := (Candidate{site}).choose([]advisor.Point{sm.Points[0], sm.Points[3]}); !ok || f.basis != BasisSM || f.fixed != 0 {
		t.Errorf("two points of an SM-bound job: %+v", f)
	}
	// Two profiles of a job with a fixed part: neither resource alone explains them; the mix is fitted.
	mixed := synthetic(site, BasisMix, 0.6)
	if f, ok := (Candidate{site}).choose([]advisor.Point{mixed.Points[0], mixed.Points[3]}); !ok || f.basis != BasisMix || f.fixed < 0.55 || f.fixed > 0.65 {
		t.Errorf("two points of a job with a fixed part: %+v", f)
	}
}
