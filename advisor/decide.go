package advisor

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// The fourth stage: decide picks the profile to recommend among the judged
// ones, by the objective, measured profiles before predicted ones and ties
// inside the noise to the smaller profile, and says why and what to run
// next; with none eligible, it says why and names the run that finds out.
// It reads the profiles and the evidence, and returns its decision.

// decision is what decide makes of the judged profiles.
type decision struct {
	choice    string // the profile recommended; "": none
	basis     string // what its figures rest on; BasisNone with no choice
	timeLimit string // the --time the advice, or the run that measures it, needs
	reason    string
	next      NextStep
	notes     []string
	// repeats is a note the reason says, to leave out of the notes.
	repeats string
}

// deciding is what decide reads; it changes none of it.
type deciding struct {
	site     *catalog.Site
	ev       *evidence
	script   string
	opt      Options
	profiles []ProfileAdvice
}

// objective is what a choice minimises: key, named what ("SU", "SU per
// 1M samples", "runtime", "queue wait + runtime").
type objective struct {
	key  func(*ProfileAdvice) float64
	what string
}

// decide picks the recommended profile among the eligible ones, or says
// why none is and what to run next.
func decide(site *catalog.Site, ev evidence, job Job, opt Options, profiles []ProfileAdvice) decision {
	d := deciding{site: site, ev: &ev, script: job.Script, opt: opt, profiles: profiles}
	var eligible []*ProfileAdvice
	for i := range d.profiles {
		if d.profiles[i].Eligible {
			eligible = append(eligible, &d.profiles[i])
		}
	}
	if len(eligible) == 0 {
		return d.none()
	}
	return d.choose(eligible)
}

// choose picks among the eligible profiles: the best figure, or the
// smallest that ties with it; the measured profiles alone where an
// untried one's advantage rests on one explanation of the times.
func (d deciding) choose(eligible []*ProfileAdvice) decision {
	obj, note := d.objectiveOf(eligible)
	out := decision{notes: appendNote(nil, note)}
	choice, best, margin, kept := d.pick(eligible, obj)
	untried, worst := d.untriedAdvantage(choice, eligible, obj)
	if untried != nil {
		// The measured profiles alone decide; the untried one is the probe.
		eligible = slices.DeleteFunc(eligible, func(pa *ProfileAdvice) bool { return pa.RuntimeSource != BasisMeasured })
		choice, best, margin, kept = d.pick(eligible, obj)
	}
	out.choice, out.basis, out.timeLimit = choice.Profile, choice.RuntimeSource, choice.TimeLimit
	out.reason = d.because(choice, best, eligible, obj, margin, untried != nil)
	if untried != nil {
		out.reason += untriedWords(untried, choice, obj, worst)
		out.next = d.probe(untried.TimeLimit, untried.Profile)
		return out
	}
	probed, note, next := d.smallerUnknown(choice, obj)
	out.notes, out.next = appendNote(out.notes, note), next
	note, next = d.tiePassedOver(choice, best, probed, obj)
	out.notes = appendNote(out.notes, note)
	if next.Kind != NextNone {
		out.next = next
	}
	if kept != nil && out.next.Kind == NextNone {
		out.next = d.probe(kept.TimeLimit, kept.Profile) // the run that tells the tie apart
	}
	if out.next.Kind == NextNone {
		note, next = d.mayNotFinish(choice, obj)
		out.notes, out.next = appendNote(out.notes, note), next
	}
	return out
}

// mayNotFinish names the probe of the profile predicted to cost the least
// below the choice of those left out only because the slow end of their
// range reaches past the partition's limit (their predicted runtime is
// within it): a run there, at that limit, may finish, and is what tells.
func (d deciding) mayNotFinish(choice *ProfileAdvice, obj objective) (string, NextStep) {
	var open []*ProfileAdvice
	for i := range d.profiles {
		pa := &d.profiles[i]
		if !pa.Eligible && pa.beyondLimit != "" && !pa.pastLimit && pa.excluded == "" && pa.OOMRisk == memory.RiskLow && obj.has(pa) &&
			!pa.onlyCapped && failedOnly(pa.Profile, d.ev.runs) == "" {
			open = append(open, pa)
		}
	}
	pa, ok := bestToMeasure(open, obj)
	if pa == nil || !ok || obj.key(pa) >= obj.key(choice) {
		return "", NextStep{}
	}
	note := fmt.Sprintf("%s is predicted to %s (%s %s against %s on %s) but %s; measure it with --time=%s%s",
		pa.Profile, obj.words().less, obj.format(pa), obj.what, obj.format(choice), choice.Profile, pa.beyondLimit, pa.TimeLimit, probeCost(pa))
	return note, d.probe(pa.TimeLimit, pa.Profile)
}

// untriedWords says why the untried profile is the probe, not the choice:
// another explanation of the measured times makes it dearer (worst, its
// figure there), or, with no explanation fitted (one profile measured),
// its prediction lies within the noise of the choice's figure.
func untriedWords(untried, choice *ProfileAdvice, obj objective, worst float64) string {
	w := obj.words()
	if formatKey(worst, obj.what) != obj.format(untried) {
		return fmt.Sprintf("; %s, never run, may %s (%s %s predicted) or %s (%s under another explanation of the measured times): measure it",
			untried.Profile, w.less, obj.format(untried), obj.what, w.orMore, formatKey(worst, obj.what)+" "+obj.what)
	}
	return fmt.Sprintf("; %s, never run, is predicted at %s %s, within the noise of %s's %s: a run there tells which is %s",
		untried.Profile, obj.format(untried), obj.what, choice.Profile, obj.format(choice), w.better)
}

// objectiveWords are an objective's words for a better and a worse
// figure: "may cost less … or more", "to cost more", "which is cheaper".
type objectiveWords struct{ less, more, orMore, better string }

// words are an SU objective's words, or a time's ("be faster", "be
// slower", "slower", "faster").
func (obj objective) words() objectiveWords {
	if strings.HasPrefix(obj.what, "SU") {
		return objectiveWords{"cost less", "cost more", "more", "cheaper"}
	}
	return objectiveWords{"be faster", "be slower", "slower", "faster"}
}

// appendNote appends note to notes where there is one.
func appendNote(notes []string, note string) []string {
	if note == "" {
		return notes
	}
	return append(notes, note)
}

// probe is the step that measures the script on profiles with the --time
// given ("" for the script's).
func (d deciding) probe(limit string, profiles ...string) NextStep {
	return probeStep(d.script, limit, profiles...)
}

// tiePassedOver names the probe of the profile a tie passed over: the best
// figure, only predicted (never run there), lost to a smaller profile
// within the noise. The choice stands, as the noise cannot tell them
// apart, but the prediction says the other costs less, and one run there
// tells whether it does. A smaller unknown's probe predicted cheaper still
// (probed) stays the next step. SU objectives only: the step is worth its
// price in SU.
func (d deciding) tiePassedOver(choice, best, probed *ProfileAdvice, obj objective) (string, NextStep) {
	if best == choice || best.RuntimeSource != BasisPredicted || obj.key(best) >= obj.key(choice) || !strings.HasPrefix(obj.what, "SU") {
		return "", NextStep{}
	}
	note := fmt.Sprintf("%s, never run, is predicted to cost less (%s %s against %s on %s), a difference within the noise: a run there tells whether it is real%s",
		best.Profile, obj.format(best), obj.what, obj.format(choice), choice.Profile, probeCost(best))
	if probed != nil && obj.has(probed) && obj.key(probed) <= obj.key(best) {
		return note, NextStep{}
	}
	return note, d.probe(best.TimeLimit, best.Profile)
}

// pick is the profile with the best figure, or the first (the smallest)
// whose figure ties with it within the noise of the runs, the best, the
// margin of the tie, and the first profile it kept the script from (nil:
// none). A profile never run does not take a tie from the
// one the script asks for: its figure is a prediction that it costs more,
// and moving a script onto it is a change no run has shown to be worth
// making (two measured profiles that tie are as good as each other, and
// the smaller leaves the larger to others).
func (d deciding) pick(eligible []*ProfileAdvice, obj objective) (choice, best *ProfileAdvice, margin float64, kept *ProfileAdvice) {
	best = eligible[0]
	for _, pa := range eligible[1:] {
		if obj.key(pa) < obj.key(best) {
			best = pa
		}
	}
	for _, pa := range eligible {
		if m := d.opt.tieMargin(pa, best); obj.key(pa) <= obj.key(best)*(1+m) {
			if pa != best && pa.RuntimeSource != BasisMeasured && d.asks(best) {
				kept = cmp.Or(kept, pa)
				continue // a larger measured profile that ties may still take it
			}
			if pa != best {
				kept = nil // the tie goes to pa: it keeps the script from nothing
			}
			return pa, best, m, kept
		}
	}
	return best, best, 0, kept
}

// asks reports whether the script asks for the profile.
func (d deciding) asks(pa *ProfileAdvice) bool {
	asked := d.ev.base.Profile
	return asked != nil && asked.Name == pa.Profile
}

// untriedAdvantage is the choice when its runtime is only predicted and
// its advantage over the measured profiles does not hold under every
// explanation the measured times admit (runmodel.FitEach), beyond the
// noise; and its figure under the worst of them. From 1g.10gb at 1000 s
// and full at 400 s, a fixed part with SM scaling puts 2g.20gb at 655 s,
// a bound on the SMs at 500 s: one makes it cheaper than 1g.10gb, the
// other dearer.
func (d deciding) untriedAdvantage(choice *ProfileAdvice, eligible []*ProfileAdvice, obj objective) (*ProfileAdvice, float64) {
	if choice.RuntimeSource != BasisPredicted || choice.RuntimeS == nil || *choice.RuntimeS <= 0 {
		return nil, 0
	}
	var measured *ProfileAdvice
	for _, pa := range eligible {
		if pa.RuntimeSource == BasisMeasured && (measured == nil || obj.key(pa) < obj.key(measured)) {
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
	for _, s := range runmodel.FitEach(d.ev.points) {
		if sec, _, _, _ := s.Predict(d.ev.points, choice.shares); sec > 0 {
			worst = max(worst, sec / *choice.RuntimeS)
		}
	}
	worstKey := obj.key(choice) * worst
	if d.opt.Objective == ObjectiveTurnaround && choice.QueueWaitS != nil {
		worstKey = *choice.QueueWaitS + *choice.RuntimeS*worst
	}
	if worstKey*(1+d.opt.tieMargin(choice, measured)) < obj.key(measured) {
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
// probe of (nil for none), the note that says why, and the probe.
func (d deciding) smallerUnknown(choice *ProfileAdvice, obj objective) (*ProfileAdvice, string, NextStep) {
	var open []*ProfileAdvice
	for i := range d.profiles {
		pa := &d.profiles[i]
		if pa.UsableMiB >= choice.UsableMiB {
			break
		}
		if pa.excluded == "" && !pa.pastLimit && pa.OOMRisk == memory.RiskUnknown && !pricedOut(pa, choice) {
			open = append(open, pa)
		}
	}
	pa, ok := bestToMeasure(open, obj)
	if pa == nil || ok && obj.key(pa) >= obj.key(choice) {
		return nil, "", NextStep{}
	}
	cost := ""
	if ok {
		cost = fmt.Sprintf(" (%s %s predicted there, against %s on %s%s)", obj.format(pa), obj.what, obj.format(choice), choice.Profile, probeCost(pa))
	}
	note := fmt.Sprintf("no GPU memory figure says whether %s, which is smaller, would fit: measure it under the monitor%s", pa.Profile, cost)
	if c := d.ev.need.Ceiling; c != nil {
		note = fmt.Sprintf("whether %s, which is smaller, would fit is not known: %s; measure it%s: %s adapts to the memory it is given",
			pa.Profile, pa.OOMRiskReason, cost, cmp.Or(c.Holder.Software, "the job"))
	}
	return pa, note, d.probe(pa.TimeLimit, pa.Profile)
}

// bestToMeasure is the profile of open (smallest first) whose predicted
// figure is the best, ok true; where none has one to compare (no runtime
// predicted), the smallest, ok false.
func bestToMeasure(open []*ProfileAdvice, obj objective) (best *ProfileAdvice, ok bool) {
	for _, pa := range open {
		if obj.has(pa) && (best == nil || obj.key(pa) < obj.key(best)) {
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

// has reports whether the profile has the figure the objective's key
// reads.
func (obj objective) has(pa *ProfileAdvice) bool {
	switch {
	case pa.RuntimeS == nil || pa.RuntimeAtLeast:
		return false
	case strings.HasPrefix(obj.what, "SU per"):
		return pa.SUPerWork != nil
	case obj.what == "SU":
		return pa.SU != nil
	}
	return true
}

// format writes the profile's figure as the objective's name reads it.
func (obj objective) format(pa *ProfileAdvice) string { return formatKey(obj.key(pa), obj.what) }

// probeCost says what one run of the probe on the profile costs, where
// its price is known: "; one run costs about 9.84 SU".
func probeCost(pa *ProfileAdvice) string {
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
func (o Options) tieMargin(pa, best *ProfileAdvice) float64 {
	m := max(noise(pa), noise(best))
	if o.Objective == ObjectiveSU {
		m = max(m, o.SUTolerance)
	}
	return m
}

// noiseWords says where a tie margin comes from.
func (o Options) noiseWords(pa, best *ProfileAdvice, margin float64) string {
	pct := fmt.Sprintf("%.0f%%", 100*margin)
	switch {
	case o.Objective == ObjectiveSU && margin == o.SUTolerance && margin > max(noise(pa), noise(best)):
		return "within the " + pct + " SU tolerance"
	case margin == DefaultNoise && (pa.RuntimeRuns < noiseRuns || best.RuntimeRuns < noiseRuns):
		return fmt.Sprintf("within the %s taken as run-to-run noise while fewer than %d runs back a figure", pct, noiseRuns)
	}
	return "within the " + pct + " run-to-run noise its runs show"
}

// objectiveOf is what the options' objective minimises over the eligible
// profiles; the note names the profiles with no queue-wait figure, which
// a turnaround counts as no wait.
func (d deciding) objectiveOf(eligible []*ProfileAdvice) (objective, string) {
	switch d.opt.Objective {
	case ObjectiveTime:
		return objective{func(pa *ProfileAdvice) float64 { return *pa.RuntimeS }, "runtime"}, ""
	case ObjectiveTurnaround:
		var missing []string
		for _, pa := range eligible {
			if pa.QueueWaitS == nil {
				missing = append(missing, pa.Profile)
			}
		}
		note := ""
		if len(missing) > 0 {
			note = fmt.Sprintf("no queue-wait figures for %s: counted as no wait", strings.Join(missing, ", "))
		}
		return objective{func(pa *ProfileAdvice) float64 {
			if pa.QueueWaitS == nil {
				return *pa.RuntimeS
			}
			return *pa.QueueWaitS + *pa.RuntimeS
		}, "queue wait + runtime"}, note
	}
	if !slices.ContainsFunc(eligible, func(pa *ProfileAdvice) bool { return pa.SUPerWork == nil }) {
		return objective{func(pa *ProfileAdvice) float64 { return *pa.SUPerWork }, "SU per " + eligible[0].WorkUnit}, ""
	}
	return objective{func(pa *ProfileAdvice) float64 { return *pa.SU }, "SU"}, ""
}

// because is the one-line reason for the choice.
// measuredOnly: eligible holds the measured profiles alone, an untried
// one left to the probe.
func (d deciding) because(choice, best *ProfileAdvice, eligible []*ProfileAdvice, obj objective, margin float64, measuredOnly bool) string {
	var b strings.Builder
	switch {
	case len(eligible) == 1 && measuredOnly:
		fmt.Fprintf(&b, "the only profile measured with low OOM risk: %s %s", obj.format(choice), obj.what)
	case len(eligible) == 1:
		fmt.Fprintf(&b, "the only profile with low OOM risk and a known runtime: %s %s", obj.format(choice), obj.what)
	case choice != best:
		fmt.Fprintf(&b, "%s %s, a tie with %s's %s, %s: a tie goes to the smaller profile",
			obj.format(choice), obj.what, best.Profile, obj.format(best), d.opt.noiseWords(choice, best, margin))
	default:
		fmt.Fprintf(&b, "lowest %s: %s%s", obj.what, obj.format(choice), d.againstRunnerUp(choice, eligible, obj))
	}
	fmt.Fprintf(&b, "; OOM risk low: %s", choice.OOMRiskReason)
	fmt.Fprintf(&b, "; runtime %s %s", slurm.FormatSeconds(*choice.RuntimeS), runtimeBasis(choice))
	if choice.TimeLimit != "" {
		fmt.Fprintf(&b, "; use --time=%s", choice.TimeLimit)
	}
	return b.String()
}

// againstRunnerUp sets the best figure beside the next best: a tie, or
// how far behind it comes.
func (d deciding) againstRunnerUp(choice *ProfileAdvice, eligible []*ProfileAdvice, obj objective) string {
	next := runnerUp(choice, eligible, obj)
	if next == nil {
		return ""
	}
	if m := d.opt.tieMargin(next, choice); obj.key(next) <= obj.key(choice)*(1+m) {
		// The best is also the first of a tie: say it is one, or
		// "then 69.4 on 2g.20gb" beside 69.4 reads as a coin toss.
		rule := "a tie goes to the smaller profile"
		if next.UsableMiB < choice.UsableMiB && next.RuntimeSource != BasisMeasured && d.asks(choice) {
			rule = fmt.Sprintf("the script asks for %s, and %s is only predicted, to %s: a run there tells", choice.Profile, next.Profile, obj.words().more)
		}
		return fmt.Sprintf(", a tie with %s's %s, %s: %s",
			next.Profile, obj.format(next), d.opt.noiseWords(choice, next, m), rule)
	}
	return fmt.Sprintf(", then %s on %s", obj.format(next), next.Profile)
}

// runtimeBasis says what a runtime rests on: "measured in 3 runs".
func runtimeBasis(pa *ProfileAdvice) string {
	if pa.RuntimeRuns > 0 && pa.RuntimeSource == BasisMeasured {
		return "measured in " + plural(pa.RuntimeRuns, "run")
	}
	return pa.RuntimeSource
}

func runnerUp(choice *ProfileAdvice, eligible []*ProfileAdvice, obj objective) *ProfileAdvice {
	var next *ProfileAdvice
	for _, pa := range eligible {
		if pa != choice && (next == nil || obj.key(pa) < obj.key(next)) {
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

// none says why nothing can be recommended, and what to run to find out:
// first what no profile changes (no runs, a script that fails, host
// memory), then what the profiles say.
func (d deciding) none() decision {
	runs := d.ev.runs
	if len(runs) == 0 && d.ev.multiGPU != nil {
		return noneBecause(fmt.Sprintf("no runs of this %d-GPU job in the history; only whole GPUs can run it", d.ev.multiGPU.GPUs),
			d.probe("", wholeGPUProfiles(d.site)...))
	}
	if len(runs) == 0 {
		return noneBecause("no runs of this script in the history, and it looks like none of the reference benchmarks", d.probe(""))
	}
	if profiles, r, ok := failsEverywhere(d.site, runs); ok {
		return noneBecause(fmt.Sprintf("the script fails whatever the profile: it failed on %s, and no run completed; job %s %s; fix the script before measuring it",
			textutil.JoinAnd(profiles), r.JobID, r.outcomeText()), NextStep{})
	}
	if r, ok := scriptFailure(runs); ok {
		var next NextStep
		if r.Outcome.Kind == outcome.NoOutputFile {
			next = LintStep(d.script)
		}
		out := noneBecause(fmt.Sprintf("no run completed, and job %s %s; no profile changes that, so fix the script before measuring it", r.JobID, r.outcomeText()), next)
		out.repeats = failureNote(r) // the reason says it
		return out
	}
	if r, ok := hostOOMOnly(runs, d.ev.host); ok {
		return noneBecause(fmt.Sprintf("no run completed, and %s, which is about --mem, not the GPU: ask for --mem=%s (the change below), then measure it",
			d.ev.host.reason, d.ev.host.mem), d.probe("", r.Profile))
	}
	return d.noneFits()
}

// noneBecause is no choice, for the reason given, and the step that finds out.
func noneBecause(reason string, next NextStep) decision {
	return decision{basis: BasisNone, reason: reason, next: next}
}

// noneFits says why none of the profiles the job was judged on is
// recommended: one of unsure fit to measure, one that fits but has no
// runtime to measure, every one that fits excluded, or none that fits.
func (d deciding) noneFits() decision {
	var blocked []string
	for _, pa := range d.profiles {
		switch {
		case pa.excluded != "":
		case pa.pastLimit:
			// No run there can finish: no probe either.
			blocked = append(blocked, pa.Profile+": "+pa.beyondLimit)
		case pa.OOMRisk == memory.RiskUnknown || pa.OOMRisk == memory.RiskMedium:
			pa := d.cheapestUnsure()
			// The probe asks for the --time a run there needs (a probe at
			// the script's would not end); the script's own is its own.
			return noneBecause(fmt.Sprintf("%s has %s OOM risk: %s; measure it under the GPU monitor%s", pa.Profile, pa.OOMRisk, pa.OOMRiskReason, probeCost(pa)),
				d.probe(pa.TimeLimit, pa.Profile))
		case pa.OOMRisk == memory.RiskLow && (pa.RuntimeS == nil || pa.RuntimeAtLeast || pa.onlyCapped):
			return d.measureStep(&pa)
		case pa.OOMRisk == memory.RiskLow:
			blocked = append(blocked, pa.Profile+": "+pa.Reason)
		}
	}
	if len(blocked) > 0 {
		return noneBecause("every profile that fits is excluded: "+strings.Join(blocked, "; "), NextStep{})
	}
	return noneBecause("no profile fits: the job needs "+d.needBeyondEvery()+"; reduce its memory use (batch size, precision) or spread it over several GPUs", NextStep{})
}

// needBeyondEvery says how the need rules out the largest profile: beyond
// its memory, or too close to it to run safely.
func (d deciding) needBeyondEvery() string {
	n := d.ev.need
	var largest *ProfileAdvice
	for i := range d.profiles {
		if pa := &d.profiles[i]; largest == nil || pa.UsableMiB > largest.UsableMiB {
			largest = pa
		}
	}
	if !n.Known() || largest == nil {
		return "more GPU memory than any profile has"
	}
	most := fmt.Sprintf("the %s usable on %s, the most any profile has", memory.FormatMiB(largest.UsableMiB), largest.Profile)
	switch {
	case n.Kind == memory.NeedOOM && n.Profile == largest.Profile && math.Round(n.MiB) <= largest.UsableMiB: // UsableMiB is rounded
		return fmt.Sprintf("more than %s: it ran out of memory there", most)
	case n.MiB < largest.UsableMiB:
		return fmt.Sprintf("at least %s of GPU memory, the %s: too close to %s", memory.FormatMiB(n.MiB), n.Source, most)
	}
	return fmt.Sprintf("at least %s of GPU memory, the %s, more than %s", memory.FormatMiB(n.MiB), n.Source, most)
}

// cheapestUnsure is the profile of unknown or medium OOM risk predicted
// to cost the least, else the smallest such: the probe that may save the
// most is the one to run first.
func (d deciding) cheapestUnsure() *ProfileAdvice {
	var unsure []*ProfileAdvice
	for i := range d.profiles {
		pa := &d.profiles[i]
		if pa.excluded == "" && !pa.pastLimit && (pa.OOMRisk == memory.RiskUnknown || pa.OOMRisk == memory.RiskMedium) {
			unsure = append(unsure, pa)
		}
	}
	best, _ := bestToMeasure(unsure, objective{func(pa *ProfileAdvice) float64 { return *pa.SU }, "SU"})
	return best
}

// measureStep says why a profile that fits has no runtime to advise on, and
// the probe that measures it: with a longer --time after a run reached its
// limit, else as it is (the runs ran out of memory on smaller profiles, or
// failed).
func (d deciding) measureStep(pa *ProfileAdvice) decision {
	out := noneBecause("", d.probe("", pa.Profile))
	out.timeLimit = pa.TimeLimit
	if pa.RuntimeAtLeast {
		out.reason = fmt.Sprintf("no run has completed on %s: it %s", pa.Profile, pa.boundBy)
		if pa.TimeLimit != "" {
			out.reason += fmt.Sprintf("; ask for --time=%s and measure it", pa.TimeLimit)
		}
		out.next = d.probe(pa.TimeLimit, pa.Profile)
		return out
	}
	out.reason = "no run has completed yet, so no runtime is known"
	if r, ok := emulatedElsewhere(d.ev.runs); ok {
		out.reason = fmt.Sprintf("no runtime is known on the site's GPU: the runs were emulated on %s (one run measured here gives the others, as the emulation scaled)", r.Emulated)
	} else if r, ok := firstFailure(d.ev.runs); ok {
		out.reason += fmt.Sprintf(": job %s %s", r.JobID, r.briefOutcome())
	}
	out.reason += fmt.Sprintf("; measure %s, where the OOM risk is low: %s", pa.Profile, pa.OOMRiskReason)
	return out
}

// firstFailure is a run that ran and did not complete, GPU OOMs first.
func firstFailure(runs []Run) (Run, bool) {
	var found Run
	for _, r := range runs {
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
func hostOOMOnly(runs []Run, host hostAdvice) (Run, bool) {
	if host.mem == "" {
		return Run{}, false
	}
	var found Run
	for _, r := range runs {
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
