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
// a profile whose fit is unsure could save its jobs at least min_su_saved
// more than the report already counts: the open jobs (not judged) all
// they spent there, the listed ones (moved to the recommended profile)
// what they would cost there.
func (b *builder) toMeasure(g *group, rec *advisor.Recommendation, open, listed []job) {
	if rec == nil || len(open)+len(listed) == 0 {
		return
	}
	priced := make([]pricedJob, 0, len(open)+len(listed))
	for _, j := range open {
		priced = append(priced, pricedJob{j, j.su})
	}
	if rec.Recommended != nil {
		there := profileAdvice(rec, *rec.Recommended)
		for _, j := range listed {
			if ratio, ok := runtimeRatio(there, profileAdvice(rec, j.rec.Profile)); ok {
				if alt, ok := chargeOn(b.site, j.rec, there, ratio); ok {
					priced = append(priced, pricedJob{j, alt})
				}
			}
		}
	}
	pa, possible := b.bestUnsure(rec, priced)
	if pa == nil || possible < b.th.MinSUSaved || possible <= 0 {
		return
	}
	m := Measure{User: g.user, Name: g.name, Script: userFile(g.path), Profile: pa.Profile, Jobs: len(priced),
		SUPossible: catalog.RoundSU(possible), Why: pa.OOMRiskReason}
	if p, ok := b.site.ProfileNamed(pa.Profile); ok {
		m.Request = p.Request
	}
	if pa.OOMRisk == memory.RiskLow { // it fits: what is not known is its runtime
		m.Why = cmp.Or(rec.Reason, pa.Reason)
	}
	for _, p := range priced {
		m.add(p.job)
	}
	slices.SortFunc(m.RanOn, func(x, y string) int { return cmp.Compare(b.rank(x), b.rank(y)) })
	m.SUSpent = catalog.RoundSU(m.SUSpent)
	m.Command = advisor.ProbeStep(m.Script, []string{pa.Profile}, pa.TimeLimit).Command()
	b.rep.ToMeasure = append(b.rep.ToMeasure, m)
}

// add counts a job the measurement would settle: its id, its profile and
// what it spent.
func (m *Measure) add(j job) {
	m.SUSpent += j.su
	m.JobIDs = append(m.JobIDs, j.rec.JobID)
	if !slices.Contains(m.RanOn, j.rec.Profile) {
		m.RanOn = append(m.RanOn, j.rec.Profile)
	}
}

// pricedJob is a job with what the report already has it cost: what it
// spent, or what its script's recommended profile would have cost it.
type pricedJob struct {
	job
	base float64
}

// bestUnsure is the profile, of those whose OOM risk recommend could not
// call low or high from the runs (or low with no runtime measured there),
// that could save the jobs the most below their base, and what it could
// save them: at the fast end of the runtime range predicted there (a
// prediction from one profile is wide, and the bound a GPU's utilization
// sets is its slow end).
func (b *builder) bestUnsure(rec *advisor.Recommendation, jobs []pricedJob) (*advisor.ProfileAdvice, float64) {
	var best *advisor.ProfileAdvice
	most := 0.0
	for i := range rec.Profiles {
		pa := &rec.Profiles[i]
		if b.rank(pa.Profile) < 0 || !unsure(pa) || pa.RuntimeS == nil {
			continue
		}
		saved := 0.0
		for _, j := range jobs {
			here := profileAdvice(rec, j.rec.Profile)
			if here == nil || here.Profile == pa.Profile {
				continue
			}
			ratio, ok := runtimeRatio(pa, here)
			if !ok && pa.RuntimeAtLeast && here.RuntimeAtLeast && here.RuntimeS != nil && *here.RuntimeS > 0 {
				// Runs that stop at their time limit: the work they did
				// there takes the model's ratio of that time here.
				ratio, ok = *pa.RuntimeS / *here.RuntimeS, true
			}
			if !ok {
				continue
			}
			if r := pa.RuntimeRangeS; r != nil && r[0] > 0 && pa.RuntimeSource == advisor.BasisPredicted {
				// What the measurement could find: the fastest the
				// prediction's range allows, as the probe is worth
				// running wherever the range reaches a saving.
				ratio *= r[0] / *pa.RuntimeS
			}
			if alt, ok := chargeOn(b.site, j.rec, pa, ratio); ok && alt < j.base {
				saved += j.base - alt
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
