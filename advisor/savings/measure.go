package savings

import (
	"cmp"
	"slices"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/memory"
	"github.com/migadvisor/migadvisor/catalog"
)

// An unknown is a next step. Where recommend cannot tell whether a
// cheaper profile fits a script (no memory figure, a framework's ceiling
// too close to the slice, a medium risk, runs that never completed), the
// report names the profile to try, what its period's jobs would have saved
// there at the runtime predicted, and the measurement that settles it.

// toMeasure adds the group's script to the report's list to measure when
// a profile whose fit is unsure is predicted to save the open jobs at least
// min_su_saved.
func (b *builder) toMeasure(g *group, rec *advisor.Recommendation, open []job) {
	if rec == nil {
		return
	}
	pa, possible := b.bestUnsure(rec, open)
	if pa == nil || possible < b.th.MinSUSaved || possible <= 0 {
		return
	}
	m := Measure{User: g.user, Name: g.name, Script: userFile(g.path), Profile: pa.Profile, Jobs: len(open),
		SUPossible: catalog.RoundSU(possible), Why: pa.OOMRiskReason}
	if p, ok := b.site.ProfileNamed(pa.Profile); ok {
		m.Request = p.Request
	}
	if pa.OOMRisk == memory.RiskLow {
		m.Why = "it fits, but no run has completed there: " + cmp.Or(rec.Reason, pa.Reason)
	}
	for _, j := range open {
		m.SUSpent += j.su
		if !slices.Contains(m.RanOn, j.rec.Profile) {
			m.RanOn = append(m.RanOn, j.rec.Profile)
		}
	}
	slices.SortFunc(m.RanOn, func(x, y string) int { return cmp.Compare(b.rank(x), b.rank(y)) })
	m.SUSpent = catalog.RoundSU(m.SUSpent)
	m.Command = advisor.ProbeStep(m.Script, []string{pa.Profile}, pa.TimeLimit).Command()
	b.rep.ToMeasure = append(b.rep.ToMeasure, m)
}

// bestUnsure is the profile, of those whose OOM risk recommend could not
// call low or high from the runs (or low with no runtime measured there),
// predicted to save the open jobs the most, and what it would save them.
func (b *builder) bestUnsure(rec *advisor.Recommendation, open []job) (*advisor.ProfileAdvice, float64) {
	var best *advisor.ProfileAdvice
	most := 0.0
	for i := range rec.Profiles {
		pa := &rec.Profiles[i]
		if b.rank(pa.Profile) < 0 || !unsure(pa) || pa.RuntimeS == nil || pa.RuntimeAtLeast {
			continue
		}
		saved := 0.0
		for _, j := range open {
			here := profileAdvice(rec, j.rec.Profile)
			if here == nil || here.Profile == pa.Profile {
				continue
			}
			ratio, ok := runtimeRatio(pa, here)
			if !ok {
				continue
			}
			if alt, ok := chargeOn(b.site, j.rec, pa, ratio); ok && alt < j.su {
				saved += j.su - alt
			}
		}
		if saved > most {
			best, most = pa, saved
		}
	}
	return best, most
}

// unsure: recommend could not rule the profile in or out: its risk is
// unknown or medium, or low where it is not eligible for want of a
// completed run.
func unsure(pa *advisor.ProfileAdvice) bool {
	switch pa.OOMRisk {
	case memory.RiskUnknown, memory.RiskMedium:
		return true
	case memory.RiskLow:
		return !pa.Eligible
	}
	return false
}
