package advisor

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/advisor/memory"
	"github.com/migadvisor/migadvisor/advisor/outcome"
	"github.com/migadvisor/migadvisor/advisor/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
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
		if pa.RuntimeS != nil && pa.OOMRisk != memory.RiskHigh && *pa.RuntimeS < fastest {
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
		reason, next := a.nextStep()
		a.rec.Reason = reason
		a.rec.SetNext(next)
		return
	}
	key, what := a.objectiveKey(eligible)
	choice, best, margin := a.pick(eligible, key)
	untried, worst := a.untriedAdvantage(choice, eligible, key)
	if untried != nil {
		// The measured profiles alone decide; the untried one is the probe.
		eligible = slices.DeleteFunc(eligible, func(pa *ProfileAdvice) bool { return pa.RuntimeSource != BasisMeasured })
		choice, best, margin = a.pick(eligible, key)
	}
	a.rec.Recommended = &choice.Profile
	a.rec.Basis = choice.RuntimeSource
	a.rec.TimeLimit = choice.TimeLimit
	a.rec.Reason = a.because(choice, best, eligible, key, what, margin)
	if untried != nil {
		a.rec.Reason += fmt.Sprintf("; %s, never run, may cost less (%s %s predicted) or more (%s under another explanation of the measured times): measure it",
			untried.Profile, formatKey(key(untried), what), what, formatKey(worst, what)+" "+what)
		a.rec.SetNext(a.probeStep(untried.TimeLimit, untried.Profile))
		return
	}
	probed := a.smallerUnknown(choice, key, what)
	a.tiePassedOver(choice, best, probed, key, what)
}

// tiePassedOver names the probe of the profile a tie passed over: the best
// figure, only predicted (never run there), lost to a smaller profile
// within the noise. The choice stands, as the noise cannot tell them
// apart, but the prediction says the other costs less, and one run there
// tells whether it does. A smaller unknown's probe predicted cheaper still
// (probed) stays the next step. SU objectives only: the step is worth its
// price in SU.
func (a *analysis) tiePassedOver(choice, best, probed *ProfileAdvice, key func(*ProfileAdvice) float64, what string) {
	if best == choice || best.RuntimeSource != BasisPredicted || key(best) >= key(choice) || !strings.HasPrefix(what, "SU") {
		return
	}
	a.note("%s, never run, is predicted to cost less (%s %s against %s on %s), a difference within the noise: a run there tells whether it is real%s",
		best.Profile, formatKey(key(best), what), what, formatKey(key(choice), what), choice.Profile, a.probeCost(best))
	if probed != nil && hasKey(probed, what) && key(probed) <= key(best) {
		return
	}
	a.rec.SetNext(a.probeStep(best.TimeLimit, best.Profile))
}

// pick is the profile with the best figure, or the first (the smallest)
// whose figure ties with it within the noise of the runs, the best, and
// the margin of the tie.
func (a *analysis) pick(eligible []*ProfileAdvice, key func(*ProfileAdvice) float64) (choice, best *ProfileAdvice, margin float64) {
	best = eligible[0]
	for _, pa := range eligible[1:] {
		if key(pa) < key(best) {
			best = pa
		}
	}
	for _, pa := range eligible {
		if m := a.tieMargin(pa, best); key(pa) <= key(best)*(1+m) {
			return pa, best, m
		}
	}
	return best, best, 0
}

// untriedAdvantage is the choice when its runtime is only predicted and
// its advantage over the measured profiles does not hold under every
// explanation the measured times admit (runmodel.FitEach), beyond the noise; and its figure under the worst of them. From
// 1g.10gb at 1000 s and full at 400 s, a fixed part with SM scaling puts
// 2g.20gb at 655 s, a bound on the SMs at 500 s: one makes it cheaper than
// 1g.10gb, the other dearer.
func (a *analysis) untriedAdvantage(choice *ProfileAdvice, eligible []*ProfileAdvice, key func(*ProfileAdvice) float64) (*ProfileAdvice, float64) {
	if choice.RuntimeSource != BasisPredicted || choice.RuntimeS == nil || *choice.RuntimeS <= 0 {
		return nil, 0
	}
	var measured *ProfileAdvice
	for _, pa := range eligible {
		if pa.RuntimeSource == BasisMeasured && (measured == nil || key(pa) < key(measured)) {
			measured = pa
		}
	}
	if measured == nil {
		return nil, 0
	}
	// The worst runtime the measured times admit for the choice, as a
	// factor of the one predicted. One measured profile admits any
	// explanation, and none is fitted on it: the prior's range stands.
	worst := 1.0
	for _, s := range runmodel.FitEach(a.points) {
		if sec, _, _, _ := s.Predict(a.points, choice.shares); sec > 0 {
			worst = max(worst, sec / *choice.RuntimeS)
		}
	}
	worstKey := key(choice) * worst
	if a.opt.Objective == ObjectiveTurnaround && choice.QueueWaitS != nil {
		worstKey = *choice.QueueWaitS + *choice.RuntimeS*worst
	}
	if worstKey*(1+a.tieMargin(choice, measured)) < key(measured) {
		return nil, 0
	}
	return choice, worstKey
}

// smallerUnknown names the probe that would tell whether a smaller profile
// than the choice fits, when no memory figure says so (a run without the
// monitor, a framework's ceiling): the advice stands, and a cheaper one may
// be found. Of the smaller profiles whose fit is unknown, the probe goes to
// the one predicted to save the most; one predicted to cost more than the
// choice is no step worth its price. It returns the profile it names the
// probe of, nil for none.
func (a *analysis) smallerUnknown(choice *ProfileAdvice, key func(*ProfileAdvice) float64, what string) *ProfileAdvice {
	var open []*ProfileAdvice
	for i := range a.rec.Profiles {
		pa := &a.rec.Profiles[i]
		if pa.UsableMiB >= choice.UsableMiB {
			break
		}
		if pa.excluded == "" && !pa.pastLimit && pa.OOMRisk == memory.RiskUnknown && !pricedOut(pa, choice) {
			open = append(open, pa)
		}
	}
	pa, ok := a.bestToMeasure(open, key, what)
	if pa == nil {
		return nil
	}
	cost := ""
	if ok {
		if key(pa) >= key(choice) {
			return nil
		}
		cost = fmt.Sprintf(" (%s %s predicted there, against %s on %s%s)", formatKey(key(pa), what), what, formatKey(key(choice), what), choice.Profile, a.probeCost(pa))
	}
	if c := a.need.Ceiling; c != nil {
		a.note("whether %s, which is smaller, would fit is not known: %s; measure it%s: %s adapts to the memory it is given",
			pa.Profile, pa.OOMRiskReason, cost, cmp.Or(c.Holder.Software, "the job"))
	} else {
		a.note("no GPU memory figure says whether %s, which is smaller, would fit: measure it under the monitor%s", pa.Profile, cost)
	}
	a.rec.SetNext(a.probeStep(pa.TimeLimit, pa.Profile))
	return pa
}

// bestToMeasure is the profile of open (smallest first) whose predicted
// figure is the best, ok true; where none has one to compare (no runtime
// predicted), the smallest, ok false.
func (a *analysis) bestToMeasure(open []*ProfileAdvice, key func(*ProfileAdvice) float64, what string) (best *ProfileAdvice, ok bool) {
	for _, pa := range open {
		if !hasKey(pa, what) {
			continue
		}
		if best == nil || key(pa) < key(best) {
			best = pa
		}
	}
	if best != nil {
		return best, true
	}
	if len(open) > 0 {
		return open[0], false
	}
	return nil, false
}

// hasKey reports whether the profile has the figure the objective's key
// reads (what names it, as objectiveKey does).
func hasKey(pa *ProfileAdvice, what string) bool {
	switch {
	case pa.RuntimeS == nil || pa.RuntimeAtLeast:
		return false
	case strings.HasPrefix(what, "SU per"):
		return pa.SUPerWork != nil
	case what == "SU":
		return pa.SU != nil
	}
	return true
}

// probeCost says what one run of the probe on the profile costs, where
// its price is known: "; one run costs about 9.84 SU".
func (a *analysis) probeCost(pa *ProfileAdvice) string {
	if pa.SU == nil {
		return ""
	}
	return "; one run costs about " + catalog.FormatSU(*pa.SU) + " SU"
}

// pricedOut reports whether a proven lower bound already makes the
// profile cost at least what the choice costs: a probe there cannot find a
// cheaper answer.
func pricedOut(pa, choice *ProfileAdvice) bool {
	if !pa.RuntimeAtLeast {
		return false
	}
	switch {
	case pa.SU != nil && choice.SU != nil:
		return *pa.SU >= *choice.SU
	case pa.SUPerWork != nil && choice.SUPerWork != nil:
		return *pa.SUPerWork >= *choice.SUPerWork
	}
	return false
}

// noise is the relative run-to-run noise of a profile's figure: the spread
// of its runs when there are enough of them, else DefaultNoise.
func noise(pa *ProfileAdvice) float64 {
	if pa.rateSpread != nil {
		return *pa.rateSpread
	}
	if pa.RuntimeRuns >= noiseRuns && pa.RuntimeSpread != nil {
		return *pa.RuntimeSpread
	}
	return DefaultNoise
}

// tieMargin is how much worse than the best a profile's figure may be and
// still tie with it: the noise of either figure, and at least the SU
// tolerance for the SU objective.
func (a *analysis) tieMargin(pa, best *ProfileAdvice) float64 {
	m := max(noise(pa), noise(best))
	if a.opt.Objective == ObjectiveSU {
		m = max(m, a.opt.SUTolerance)
	}
	return m
}

// noiseWords says where a tie margin comes from.
func (a *analysis) noiseWords(pa, best *ProfileAdvice, margin float64) string {
	pct := fmt.Sprintf("%.0f%%", 100*margin)
	switch {
	case a.opt.Objective == ObjectiveSU && margin == a.opt.SUTolerance && margin > max(noise(pa), noise(best)):
		return "within the " + pct + " SU tolerance"
	case margin == DefaultNoise && (pa.RuntimeRuns < noiseRuns || best.RuntimeRuns < noiseRuns):
		return fmt.Sprintf("within the %s taken as run-to-run noise while fewer than %d runs back a figure", pct, noiseRuns)
	}
	return "within the " + pct + " run-to-run noise its runs show"
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
func (a *analysis) because(choice, best *ProfileAdvice, eligible []*ProfileAdvice, key func(*ProfileAdvice) float64, what string, margin float64) string {
	var b strings.Builder
	switch {
	case len(eligible) == 1:
		fmt.Fprintf(&b, "the only profile with low OOM risk and a known runtime: %s %s", formatKey(key(choice), what), what)
	case choice != best:
		fmt.Fprintf(&b, "%s %s, a tie with %s's %s, %s: a tie goes to the smaller profile",
			formatKey(key(choice), what), what, best.Profile, formatKey(key(best), what), a.noiseWords(choice, best, margin))
	default:
		fmt.Fprintf(&b, "lowest %s: %s", what, formatKey(key(choice), what))
		next := runnerUp(choice, eligible, key)
		if m := 0.0; next != nil {
			if m = a.tieMargin(next, choice); key(next) <= key(choice)*(1+m) {
				// The best is also the first of a tie: say it is one, or
				// "then 69.4 on 2g.20gb" beside 69.4 reads as a coin toss.
				fmt.Fprintf(&b, ", a tie with %s's %s, %s: a tie goes to the smaller profile",
					next.Profile, formatKey(key(next), what), a.noiseWords(choice, next, m))
			} else {
				fmt.Fprintf(&b, ", then %s on %s", formatKey(key(next), what), next.Profile)
			}
		}
	}
	fmt.Fprintf(&b, "; OOM risk low: %s", choice.OOMRiskReason)
	fmt.Fprintf(&b, "; runtime %s %s", slurm.FormatSeconds(*choice.RuntimeS), runtimeBasis(choice))
	if choice.TimeLimit != "" {
		fmt.Fprintf(&b, "; use --time=%s", choice.TimeLimit)
	}
	return b.String()
}

// runtimeBasis says what a runtime rests on: "measured in 3 runs".
func runtimeBasis(pa *ProfileAdvice) string {
	if pa.RuntimeRuns > 0 && pa.RuntimeSource == BasisMeasured {
		return "measured in " + plural(pa.RuntimeRuns, "run")
	}
	return pa.RuntimeSource
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
	return catalog.FormatSU(v)
}

// nextStep says why nothing can be recommended, and what to run to find out.
func (a *analysis) nextStep() (reason string, next NextStep) {
	if len(a.runs) == 0 && a.rec.MultiGPU != nil {
		return fmt.Sprintf("no runs of this %d-GPU job in the history; only whole GPUs can run it", a.rec.MultiGPU.GPUs),
			a.probeStep("", wholeGPUProfiles(a.site)...)
	}
	if len(a.runs) == 0 {
		return "no runs of this script in the history, and it looks like none of the reference benchmarks",
			a.probeStep("")
	}
	if profiles, r, ok := failsEverywhere(a.site, a.runs); ok {
		return fmt.Sprintf("the script fails whatever the profile: it failed on %s, and no run completed; job %s %s; fix the script before measuring it",
			textutil.JoinAnd(profiles), r.JobID, r.outcomeText()), NextStep{}
	}
	if r, ok := scriptFailure(a.runs); ok {
		var next NextStep
		if r.Outcome.Kind == outcome.NoOutputFile {
			next = LintStep(a.job.Script)
		}
		a.rec.Notes = slices.DeleteFunc(a.rec.Notes, func(n string) bool { return n == failureNote(r) }) // the reason says it
		return fmt.Sprintf("no run completed, and job %s %s; no profile changes that, so fix the script before measuring it", r.JobID, r.outcomeText()), next
	}
	if r, ok := a.hostOOMOnly(); ok {
		return fmt.Sprintf("no run completed, and %s, which is about --mem, not the GPU: ask for --mem=%s (the change below), then measure it",
			a.rec.MemReason, a.rec.Mem), a.probeStep("", r.Profile)
	}
	var blocked []string
	for _, pa := range a.rec.Profiles {
		switch {
		case pa.excluded != "":
		case pa.pastLimit:
			// No run there can finish: no probe either.
			blocked = append(blocked, pa.Profile+": "+pa.beyondLimit)
		case pa.OOMRisk == memory.RiskUnknown || pa.OOMRisk == memory.RiskMedium:
			pa := a.cheapestUnsure()
			return fmt.Sprintf("%s has %s OOM risk: %s; measure it under the GPU monitor%s", pa.Profile, pa.OOMRisk, pa.OOMRiskReason, a.probeCost(pa)),
				a.probeStep("", pa.Profile)
		case pa.OOMRisk == memory.RiskLow && (pa.RuntimeS == nil || pa.RuntimeAtLeast || pa.onlyCapped):
			return a.measureStep(&pa)
		case pa.OOMRisk == memory.RiskLow:
			blocked = append(blocked, pa.Profile+": "+pa.Reason)
		}
	}
	if len(blocked) > 0 {
		return "every profile that fits is excluded: " + strings.Join(blocked, "; "), NextStep{}
	}
	need := "more GPU memory than any profile has"
	if a.need.Known() {
		need = fmt.Sprintf("at least %s of GPU memory, the %s, more than any profile has", memory.FormatMiB(a.need.MiB), a.need.Source)
	}
	return "no profile fits: the job needs " + need + "; reduce its memory use (batch size, precision) or spread it over several GPUs", NextStep{}
}

// cheapestUnsure is the profile of unknown or medium OOM risk predicted
// to cost the least, else the smallest such: the probe that may save the
// most is the one to run first.
func (a *analysis) cheapestUnsure() *ProfileAdvice {
	var unsure []*ProfileAdvice
	for i := range a.rec.Profiles {
		pa := &a.rec.Profiles[i]
		if pa.excluded == "" && !pa.pastLimit && (pa.OOMRisk == memory.RiskUnknown || pa.OOMRisk == memory.RiskMedium) {
			unsure = append(unsure, pa)
		}
	}
	best, _ := a.bestToMeasure(unsure, func(pa *ProfileAdvice) float64 { return *pa.SU }, "SU")
	return best
}

// measureStep says why a profile that fits has no runtime to advise on, and
// the probe that measures it: with a longer --time after a run reached its
// limit, else as it is (the runs ran out of memory on smaller profiles, or
// failed).
func (a *analysis) measureStep(pa *ProfileAdvice) (reason string, next NextStep) {
	a.rec.TimeLimit = pa.TimeLimit
	if pa.RuntimeAtLeast {
		reason = fmt.Sprintf("no run has completed on %s: it %s", pa.Profile, pa.boundBy)
		if pa.TimeLimit != "" {
			reason += fmt.Sprintf("; ask for --time=%s and measure it", pa.TimeLimit)
		}
		return reason, a.probeStep(pa.TimeLimit, pa.Profile)
	}
	reason = "no run has completed yet, so no runtime is known"
	if r, ok := emulatedElsewhere(a.runs); ok {
		reason = fmt.Sprintf("no runtime is known on the site's GPU: the runs were emulated on %s (one run measured here gives the others, as the emulation scaled)", r.Emulated)
	} else if r, ok := a.firstFailure(); ok {
		reason += fmt.Sprintf(": job %s %s", r.JobID, r.briefOutcome())
	}
	return reason + fmt.Sprintf("; measure %s, where the OOM risk is low: %s", pa.Profile, pa.OOMRiskReason), a.probeStep("", pa.Profile)
}

// firstFailure is a run that ran and did not complete, GPU OOMs first.
func (a *analysis) firstFailure() (Run, bool) {
	var found Run
	for _, r := range a.runs {
		switch {
		case r.GPUOOM:
			return r, true
		case !r.Completed && ran(r) && found.JobID == "":
			found = r
		}
	}
	return found, found.JobID != ""
}

// hostOOMOnly is the run that ran out of host memory, when that is what
// stopped the job and no run completed: --mem, not a profile, is the fix.
func (a *analysis) hostOOMOnly() (Run, bool) {
	if a.rec.Mem == "" {
		return Run{}, false
	}
	var found Run
	for _, r := range a.runs {
		switch {
		case r.Completed:
			return Run{}, false
		case r.HostOOM && found.JobID == "":
			found = r
		}
	}
	return found, found.JobID != ""
}

// scriptFailure is a run that failed for a reason no profile changes (a
// missing command, a missing output directory), when no run completed:
// the script needs fixing before any probe can measure it.
func scriptFailure(runs []Run) (Run, bool) {
	var found Run
	for _, r := range runs {
		switch {
		case r.Completed:
			return Run{}, false
		case r.Outcome.Kind == outcome.CommandNotFound || r.Outcome.Kind == outcome.NoOutputFile:
			found = r
		}
	}
	return found, found.JobID != ""
}

func joinProfiles(ps []string) string { return strings.Join(ps, ", ") }
