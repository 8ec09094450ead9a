package savings

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// An unknown is a next step. Where recommend cannot tell whether a
// cheaper profile fits a script (no memory figure, a framework's ceiling
// too close to the slice, a medium risk, runs that never completed), the
// report names the profile to try, what its period's jobs would have saved
// there at the runtime predicted, and the measurement that settles it.

// jobsToMeasure are a group's jobs of the period that a measurement could
// improve: not judged (open), moved to the recommended profile (listed),
// and judged right where they ran (kept).
type jobsToMeasure struct{ open, listed, kept []job }

// toMeasure adds the group's script to the report's list to measure when
// a profile whose fit or runtime is unsure could save its jobs at least
// min_su_saved more than the report already counts: the open and kept
// jobs all they spent there, the listed ones (moved to the recommended
// profile) what they would cost there. For a kept job, judged right where
// it ran, the profiles to try are the one recommend names the probe of and
// the smaller ones the memory figure lets it fit whose runtime is only
// predicted (kept: measureFor).
func (b *builder) toMeasure(g *group, rec *advisor.Recommendation, jobs jobsToMeasure) {
	if rec == nil || len(jobs.open)+len(jobs.listed)+len(jobs.kept) == 0 {
		return
	}
	priced := b.priceToMeasure(rec, jobs)
	pa, possible := b.bestUnsure(rec, priced)
	if pa == nil || possible < b.th.MinSUSaved || possible <= 0 {
		return
	}
	m := Measure{User: g.user, Name: g.name, Script: userFile(g.path), Profile: pa.Profile, Jobs: len(priced),
		SUPossible: catalog.RoundSU(possible), Why: b.unsureWhy(rec, pa), Unknown: unknownOn(pa), group: g.key}
	if p, ok := b.site.ProfileNamed(pa.Profile); ok {
		m.Request = p.Request
	}
	for _, p := range priced {
		m.add(p.job)
	}
	slices.SortFunc(m.RanOn, func(x, y string) int { return cmp.Compare(b.rank(x), b.rank(y)) })
	m.SUSpent = catalog.RoundSU(m.SUSpent)
	if note := pa.TimeLimitNote(); note != "" && !strings.Contains(m.Why, note) {
		m.Why += "; " + note // its --time is the partition's limit: a run may not finish
	}
	m.Command = advisor.ProbeStep(m.Script, []string{pa.Profile}, pa.TimeLimit).Command()
	b.rep.ToMeasure = append(b.rep.ToMeasure, m)
}

// priceToMeasure is each job with what the report already has it cost:
// what it spent, or for a listed job what the recommended profile would
// have cost it.
func (b *builder) priceToMeasure(rec *advisor.Recommendation, jobs jobsToMeasure) []pricedJob {
	priced := make([]pricedJob, 0, len(jobs.open)+len(jobs.listed)+len(jobs.kept))
	for _, j := range jobs.open {
		priced = append(priced, pricedJob{job: j, base: j.su})
	}
	for _, j := range jobs.kept {
		priced = append(priced, pricedJob{job: j, base: j.su, kept: true})
	}
	if rec.Recommended != nil {
		there := rec.Profile(*rec.Recommended)
		for _, j := range jobs.listed {
			if ratio, ok := runtimeRatio(there, rec.Profile(j.rec.Profile)); ok {
				if alt, ok := chargeOn(b.site, j.rec, there, ratio); ok {
					priced = append(priced, pricedJob{job: j, base: alt})
				}
			}
		}
	}
	return priced
}

// unsureWhy says what is not known on the profile to measure: its fit,
// in recommend's words, and its runtime where it is only predicted; or,
// where the profile fits and recommend could not choose it, why.
func (b *builder) unsureWhy(rec *advisor.Recommendation, pa *advisor.ProfileAdvice) string {
	fit := ""
	switch {
	case pa.OOMRisk != memory.RiskLow:
		fit = pa.OOMRiskReason
	case !pa.Eligible || rec.Recommended == nil:
		return cmp.Or(rec.Reason, pa.Reason) // it fits: what is not known is its runtime
	}
	runtime := predictedWhy(rec, pa)
	if fit == "" || runtime == "" || pa.OOMRisk == memory.RiskUnknown {
		return cmp.Or(fit, runtime)
	}
	return fit + "; and " + runtime
}

// unknownOn is what a measurement on pa's profile settles: the fit where
// its OOM risk is not low, the runtime where that is only predicted.
func unknownOn(pa *advisor.ProfileAdvice) string {
	fit, runtime := pa.OOMRisk != memory.RiskLow, pa.RuntimeSource != advisor.BasisMeasured
	switch {
	case fit && runtime:
		return UnknownBoth
	case fit:
		return UnknownFit
	}
	return UnknownRuntime
}

// predictedWhy says that the profile's runtime is only predicted, its
// range, and its SU a run beside the recommended profile's: within the
// noise of the runs where recommend names its probe, else as little as at
// the fast end of the range. "" where the runtime is not a prediction.
func predictedWhy(rec *advisor.Recommendation, pa *advisor.ProfileAdvice) string {
	if pa.RuntimeSource != advisor.BasisPredicted || pa.RuntimeS == nil {
		return ""
	}
	why := "its runtime there, which is only predicted (it never ran there): " + slurm.FormatSeconds(*pa.RuntimeS)
	r := pa.RuntimeRangeS
	if r != nil {
		why += fmt.Sprintf(", from %s to %s", slurm.FormatSeconds(r[0]), slurm.FormatSeconds(r[1]))
	}
	var there *advisor.ProfileAdvice
	if rec.Recommended != nil {
		there = rec.Profile(*rec.Recommended)
	}
	if pa.SU == nil || there == nil || there.SU == nil {
		return why
	}
	why += fmt.Sprintf("; about %s SU a run against %s on %s", catalog.FormatSU(*pa.SU), catalog.FormatSU(*there.SU), there.Profile)
	switch {
	case probes(rec, pa.Profile):
		why += ", a difference within the noise of the runs"
	case r != nil && *pa.SU > *there.SU && r[0] < *pa.RuntimeS:
		why += fmt.Sprintf(", as little as %s at the fast end of the range", catalog.FormatSU(*pa.SU*r[0] / *pa.RuntimeS))
	}
	return why
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
	kept bool // judged right where it ran: recommend's probe alone may move it
}

// bestUnsure is the profile, of those whose OOM risk recommend could not
// call low or high from the runs (or low with no runtime measured there),
// and those recommend names the probe of, predicted to save the jobs the
// most below their base, and what it could save them: at the fast end of
// the runtime range predicted there (a prediction from one profile is
// wide, and the bound a GPU's utilization sets is its slow end). Ranked by
// the fast end alone, a small slice's wide range won over the slice
// predicted to cost less (a QLoRA job listed for 1g.10gb, predicted at 12.3
// SU an hour of its work, beside 2g.20gb's 10.4). The recommended profile
// is no step: the listed jobs go there already.
func (b *builder) bestUnsure(rec *advisor.Recommendation, jobs []pricedJob) (*advisor.ProfileAdvice, float64) {
	var best, reach *advisor.ProfileAdvice
	bestCentral, bestFast, mostFast := 0.0, 0.0, 0.0
	for i := range rec.Profiles {
		pa := &rec.Profiles[i]
		if b.rank(pa.Profile) < 0 || pa.RuntimeS == nil || recommends(rec, pa.Profile) || pa.PastTimeLimit() {
			continue // no run there can finish within its partition's limit: nothing to measure
		}
		central, fast := 0.0, 0.0
		for _, j := range jobs {
			if b.measureFor(rec, pa, j) {
				central += b.couldSave(rec, pa, j, false)
				fast += b.couldSave(rec, pa, j, true)
			}
		}
		if central > bestCentral {
			best, bestCentral, bestFast = pa, central, fast
		}
		if fast > mostFast {
			reach, mostFast = pa, fast
		}
	}
	// The profile predicted to save the most is the one to try first, as
	// recommend's own probe of the cheapest; where none is predicted to
	// save and not enough, the one whose range reaches the most.
	if best != nil && bestFast >= b.th.MinSUSaved {
		return best, bestFast
	}
	return reach, mostFast
}

// measureFor reports whether measuring pa's profile could settle what the
// job might save there. For a job not judged, or moved, a profile of
// unsure fit or runtime, or the one recommend names the probe of. For a
// job judged right where it ran, recommend's probe, or a smaller profile
// the memory figure lets it fit (a low or medium risk) whose runtime is
// only predicted: a prediction from one profile is scaled by a prior, or
// at the bound the GPU's utilization sets, the slowest the job could run
// there, and its range says what a run may find. A larger profile is not:
// its saving would rest on a speed-up the far end of a range predicted
// upwards allows for nearly any job, where a smaller slice's rests on its
// price.
func (b *builder) measureFor(rec *advisor.Recommendation, pa *advisor.ProfileAdvice, j pricedJob) bool {
	switch {
	case probes(rec, pa.Profile):
		return true
	case !j.kept:
		return unsure(pa)
	}
	fits := pa.OOMRisk == memory.RiskLow || pa.OOMRisk == memory.RiskMedium
	return fits && pa.RuntimeSource == advisor.BasisPredicted && b.rank(pa.Profile) < b.rank(j.rec.Profile)
}

// couldSave is what the job could save below its base on pa's profile, at
// the runtime predicted there, or at the fast end of its range; 0 where it
// could not.
func (b *builder) couldSave(rec *advisor.Recommendation, pa *advisor.ProfileAdvice, j pricedJob, fastEnd bool) float64 {
	here := rec.Profile(j.rec.Profile)
	if here == nil || here.Profile == pa.Profile {
		return 0
	}
	ratio, ok := runtimeRatio(pa, here)
	if !ok && pa.RuntimeAtLeast && here.RuntimeAtLeast && here.RuntimeS != nil && *here.RuntimeS > 0 {
		// Runs that stop at their time limit: the work they did
		// there takes the model's ratio of that time here.
		ratio, ok = *pa.RuntimeS / *here.RuntimeS, true
	}
	if !ok {
		return 0
	}
	if r := pa.RuntimeRangeS; fastEnd && r != nil && r[0] > 0 && pa.RuntimeSource == advisor.BasisPredicted {
		// What the measurement could find: the fastest the
		// prediction's range allows, as the probe is worth
		// running wherever the range reaches a saving.
		ratio *= r[0] / *pa.RuntimeS
	}
	if alt, ok := chargeOn(b.site, j.rec, pa, ratio); ok && alt < j.base {
		return j.base - alt
	}
	return 0
}

// probes reports whether recommend's next step is the probe of profile.
func probes(rec *advisor.Recommendation, profile string) bool {
	return rec.NextStep.Kind == advisor.NextProbe && slices.Contains(rec.NextStep.Profiles, profile)
}

// recommends reports whether recommend names profile.
func recommends(rec *advisor.Recommendation, profile string) bool {
	return rec.Recommended != nil && *rec.Recommended == profile
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
