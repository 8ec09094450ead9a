package advisor

import (
	"fmt"
	"math"
	"strings"

	"github.com/migadvisor/migadvisor/slurm"
)

// applySlowdown excludes profiles more than MaxSlowdown times slower than the
// fastest profile the job can run on.
func (a *analysis) applySlowdown() {
	if a.opt.MaxSlowdown <= 0 {
		return
	}
	fastest, name := math.Inf(1), ""
	for _, pa := range a.rec.Profiles {
		if pa.RuntimeS != nil && pa.OOMRisk != RiskHigh && *pa.RuntimeS < fastest {
			fastest, name = *pa.RuntimeS, pa.Profile
		}
	}
	for i := range a.rec.Profiles {
		pa := &a.rec.Profiles[i]
		if pa.Eligible && *pa.RuntimeS > a.opt.MaxSlowdown*fastest {
			pa.Eligible = false
			pa.Reason = fmt.Sprintf("%.1f× slower than %s, beyond --max-slowdown %g", *pa.RuntimeS/fastest, name, a.opt.MaxSlowdown)
		}
	}
}

// decide picks the recommended profile among the eligible ones.
func (a *analysis) decide() {
	var eligible []*ProfileAdvice
	for i := range a.rec.Profiles {
		if a.rec.Profiles[i].Eligible {
			eligible = append(eligible, &a.rec.Profiles[i])
		}
	}
	if len(eligible) == 0 {
		a.rec.Reason, a.rec.Next = a.nextStep()
		return
	}
	key, what := a.objectiveKey(eligible)
	best := eligible[0]
	for _, pa := range eligible[1:] {
		if key(pa) < key(best) {
			best = pa
		}
	}
	choice := best
	if a.opt.Objective == ObjectiveSU {
		// Profiles are ordered from the smallest: take the first close enough.
		for _, pa := range eligible {
			if key(pa) <= key(best)*(1+a.opt.SUTolerance) {
				choice = pa
				break
			}
		}
	}
	a.rec.Recommended = &choice.Profile
	a.rec.Basis = choice.RuntimeSource
	a.rec.TimeLimit = choice.TimeLimit
	a.rec.Reason = a.because(choice, best, eligible, key, what)
}

// objectiveKey is what the objective minimises, and its name.
func (a *analysis) objectiveKey(eligible []*ProfileAdvice) (func(*ProfileAdvice) float64, string) {
	switch a.opt.Objective {
	case ObjectiveTime:
		return func(pa *ProfileAdvice) float64 { return *pa.RuntimeS }, "runtime"
	case ObjectiveTurnaround:
		missing := []string{}
		for _, pa := range eligible {
			if pa.QueueWaitS == nil {
				missing = append(missing, pa.Profile)
			}
		}
		if len(missing) > 0 {
			a.note("no queue-wait figures for %s: counted as no wait", joinProfiles(missing))
		}
		return func(pa *ProfileAdvice) float64 {
			if pa.QueueWaitS == nil {
				return *pa.RuntimeS
			}
			return *pa.QueueWaitS + *pa.RuntimeS
		}, "queue wait + runtime"
	}
	perWork := true
	for _, pa := range eligible {
		perWork = perWork && pa.SUPerWork != nil
	}
	if perWork {
		return func(pa *ProfileAdvice) float64 { return *pa.SUPerWork }, "SU per " + eligible[0].WorkUnit
	}
	return func(pa *ProfileAdvice) float64 { return *pa.SU }, "SU"
}

// because is the one-line reason for the choice.
func (a *analysis) because(choice, best *ProfileAdvice, eligible []*ProfileAdvice, key func(*ProfileAdvice) float64, what string) string {
	var b strings.Builder
	switch {
	case len(eligible) == 1:
		fmt.Fprintf(&b, "the only profile with low OOM risk and a known runtime (%s %s)", formatKey(key(choice), what), what)
	case choice != best:
		fmt.Fprintf(&b, "%s %s, within %.0f%% of the lowest (%s on %s), on a smaller profile",
			formatKey(key(choice), what), what, 100*a.opt.SUTolerance, formatKey(key(best), what), best.Profile)
	default:
		fmt.Fprintf(&b, "lowest %s: %s", what, formatKey(key(choice), what))
		if next := runnerUp(choice, eligible, key); next != nil {
			fmt.Fprintf(&b, " (next: %s on %s)", formatKey(key(next), what), next.Profile)
		}
	}
	fmt.Fprintf(&b, "; OOM risk low (%s)", choice.OOMRiskReason)
	fmt.Fprintf(&b, "; runtime %s %s", slurm.FormatSeconds(*choice.RuntimeS), choice.RuntimeSource)
	if choice.TimeLimit != "" {
		fmt.Fprintf(&b, "; use --time=%s", choice.TimeLimit)
	}
	return b.String()
}

func runnerUp(choice *ProfileAdvice, eligible []*ProfileAdvice, key func(*ProfileAdvice) float64) *ProfileAdvice {
	var next *ProfileAdvice
	for _, pa := range eligible {
		if pa != choice && (next == nil || key(pa) < key(next)) {
			next = pa
		}
	}
	return next
}

func formatKey(v float64, what string) string {
	if strings.Contains(what, "runtime") || strings.Contains(what, "wait") {
		return slurm.FormatSeconds(v)
	}
	return fmt.Sprintf("%.3g", v)
}

// nextStep says why nothing can be recommended, and what to run to find out.
func (a *analysis) nextStep() (reason, next string) {
	if len(a.runs) == 0 {
		return "no runs of this script in the history, and it looks like none of the reference benchmarks",
			a.probeCommand("")
	}
	var blocked []string
	for _, pa := range a.rec.Profiles {
		switch {
		case pa.OOMRisk == RiskUnknown || pa.OOMRisk == RiskMedium:
			return fmt.Sprintf("%s has %s OOM risk (%s); measure it under the GPU monitor", pa.Profile, pa.OOMRisk, pa.OOMRiskReason),
				a.probeCommand(pa.Profile)
		case pa.OOMRisk == RiskLow && pa.RuntimeS == nil:
			return fmt.Sprintf("no run has completed, so no runtime is known; give the job a longer --time than %s and measure %s",
				a.job.Resources.Time, pa.Profile), a.probeCommand(pa.Profile)
		case pa.OOMRisk == RiskLow:
			blocked = append(blocked, pa.Profile+": "+pa.Reason)
		}
	}
	if len(blocked) > 0 {
		return "every profile that fits is excluded (" + strings.Join(blocked, "; ") + ")", ""
	}
	need := "more GPU memory than any profile has"
	if a.need.Known() {
		need = fmt.Sprintf("at least %.0f MiB of GPU memory (%s)", a.need.MiB, a.need.Source)
	}
	return "the job ran out of GPU memory or needs " + need + " on every profile: reduce its memory use (batch size, precision) or spread it over several GPUs", ""
}
