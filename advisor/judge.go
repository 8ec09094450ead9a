package advisor

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// The second stage: judge weighs one profile on the evidence, alone: its
// OOM risk, runtime, SU, the --time it needs, its queue wait, and whether
// it may be recommended. It reads the evidence and returns the profile's
// advice; no profile's judgement reads another's.

// chargeJob is the SU formula: Site.Charge, which a test replaces to see a
// price fail.
var chargeJob = (*catalog.Site).Charge

// DefaultNoise is the run-to-run noise taken for a figure with fewer than
// noiseRuns runs behind it: runs of one job on one profile often differ by
// several per cent (node, file system, data loading).
const (
	DefaultNoise = 0.10
	noiseRuns    = 3
)

// judgeAll judges every profile of the site, smallest first, and writes
// SU per unit of work in one multiple for all of them; the notes say which
// profiles have no price.
func judgeAll(site *catalog.Site, ev evidence, job Job, opt Options) ([]ProfileAdvice, []string) {
	var profiles []ProfileAdvice
	var notes []string
	for _, p := range site.ProfilesBySize() {
		pa, note := judge(site, ev, job, opt, p)
		profiles = append(profiles, pa)
		if note != "" {
			notes = append(notes, note)
		}
	}
	return scaleWork(profiles), notes
}

// judging is what one profile's judgement reads; it changes none of it.
type judging struct {
	site *catalog.Site
	ev   *evidence
	job  Job
	opt  Options
}

// judge weighs one profile: OOM risk, runtime, SU, time limit, queue wait,
// and whether it may be recommended. The note says why it has no price,
// "" where it has one.
func judge(site *catalog.Site, ev evidence, job Job, opt Options, p *catalog.Profile) (ProfileAdvice, string) {
	j := judging{site: site, ev: &ev, job: job, opt: opt}
	pa := tally(p.Name, ev.runs)
	pa.UsableMiB, pa.capacity, pa.shares = math.Round(p.UsableMemory.MiB()), site.Capacity(p), site.Shares(p)
	j.memoryRisk(&pa, p)
	j.runtime(&pa)
	note := j.charge(&pa, p)
	j.timeLimit(&pa, p)
	if w, ok := job.QueueWaitS[p.Name]; ok {
		pa.QueueWaitS = ptr(math.Round(w))
	}
	if pa.excluded = ev.multiGPU.exclusion(p); pa.excluded != "" {
		// It cannot run the job: no figure of it means anything.
		pa.OOMRisk, pa.OOMRiskReason, pa.GPUMemNeedMiB, pa.GPUMemCeilingMiB = memory.RiskNone, pa.excluded, nil, nil
		pa.RuntimeS, pa.RuntimeRangeS, pa.RuntimeSource, pa.RuntimeAtLeast, pa.SU, pa.SUPerWork, pa.TimeLimit = nil, nil, "", false, nil, nil, ""
	}
	pa.Eligible, pa.Reason = j.eligibility(&pa)
	return pa, note
}

// tally counts the runs on the profile by how they ended.
func tally(profile string, runs []Run) ProfileAdvice {
	pa := ProfileAdvice{Profile: profile, OOMRisk: memory.RiskUnknown}
	for _, r := range runs {
		if r.Profile != profile {
			continue
		}
		pa.Runs++
		if r.Emulated != "" {
			pa.Emulated = r.Emulated
		}
		if r.Completed {
			pa.Completed++
		}
		if r.TimedOut {
			pa.TimedOut++
		}
		if r.HostOOM {
			pa.HostOOM++
		}
		pa.OOMObserved = pa.OOMObserved || r.GPUOOM
		if r.GPUOOM {
			pa.GPUOOMs++
		}
	}
	return pa
}

// memoryRisk sets the job's GPU memory need, its ceiling, and the OOM
// risk on the profile.
func (j judging) memoryRisk(pa *ProfileAdvice, p *catalog.Profile) {
	need := j.ev.need
	if need.Known() {
		pa.GPUMemNeedMiB = ptr(math.Round(need.MiB))
	}
	if c := need.Ceiling; c != nil && (!need.Known() || c.MiB > need.MiB) {
		pa.GPUMemCeilingMiB = ptr(math.Round(c.MiB))
	}
	risk := memory.OOMRisk(p.Name, p.UsableMemory.MiB(), j.ev.memRuns, need, j.opt.LowRiskShare)
	pa.OOMRisk, pa.OOMRiskReason = risk.Level, j.fromPrior(risk.Reason)
}

// fromPrior marks a judgement made on a reference benchmark's runs.
func (j judging) fromPrior(reason string) string {
	if j.ev.basis == BasisPrior {
		return "in the reference benchmark, " + reason
	}
	return reason
}

// runtime sets the profile's runtime: the median of its completed runs; else
// the job's total work at the rate measured here (time-capped runs count);
// else predicted from the other profiles. Never below a run that reached its
// time limit here or on a bigger profile: such a time is a proven lower
// bound, and a runtime that rests on it is marked "at least".
func (j judging) runtime(pa *ProfileAdvice) {
	if m, sorted, bound, ok := j.ev.measuredRuntime(j.site, pa.Profile); ok {
		j.measured(pa, m, sorted, bound)
		return
	}
	lower, bound := j.lowerBound(pa)
	pa.boundBy = bound
	sec, lo, hi, ok := j.workRuntime(pa.Profile)
	pa.onlyCapped = !ok && cappedOnly(pa.Profile, j.ev.runs)
	if !ok {
		sec, lo, hi, ok = j.predictRuntime(pa.shares, lower == 0)
	}
	switch {
	case !ok && lower == 0:
		return
	case !ok:
		sec, lo, hi = lower, lower, lower
	}
	if sec <= lower {
		pa.RuntimeAtLeast = true
	}
	pa.RuntimeS = ptr(roundSeconds(max(sec, lower)))
	pa.RuntimeRangeS = &[2]float64{roundSeconds(max(lo, lower)), roundSeconds(max(hi, lower))}
	pa.RuntimeSource = BasisPredicted
	if j.ev.basis == BasisPrior {
		pa.RuntimeSource = BasisPrior
	}
}

// measured sets a runtime measured on the profile: the median m of its
// runs' sorted times, a bound where a run reached its limit above it, and
// how sure it is (the runs behind it and their spread).
func (j judging) measured(pa *ProfileAdvice, m float64, sorted []float64, bound float64) {
	if bound > 0 {
		pa.RuntimeAtLeast = true
		pa.boundBy = fmt.Sprintf("ran past its time limit here after %s in %s of its %s", slurm.FormatSeconds(bound),
			plural(pa.TimedOut, "run"), plural(len(sorted), "run"))
	}
	pa.RuntimeS, pa.RuntimeRangeS = ptr(roundSeconds(m)), &[2]float64{roundSeconds(sorted[0]), roundSeconds(sorted[len(sorted)-1])}
	pa.RuntimeSource = j.ev.basis
	if j.ev.basis == BasisPrior {
		return // one reference measurement, not the job's runs
	}
	pa.RuntimeRuns = len(sorted)
	if len(sorted) > 1 {
		pa.RuntimeSpread = ptr(math.Round(100*(sorted[len(sorted)-1]-sorted[0])/m) / 100)
	}
	pa.rateSpread = rateSpread(pa.Profile, j.ev.runs, j.ev.workSeen)
}

// roundSeconds rounds a runtime to the whole seconds it is printed in
// (never to 0 for a run that took time).
func roundSeconds(s float64) float64 {
	if s <= 0 {
		return s
	}
	return max(math.Round(s), 1)
}

// cappedOnly reports whether the profile has runs and every one reached its
// time limit or failed: no completion, no work rate.
func cappedOnly(profile string, runs []Run) bool {
	n := 0
	for _, r := range runs {
		if r.Profile != profile {
			continue
		}
		if r.Completed || !r.TimedOut && !(r.State == "FAILED" && !r.GPUOOM && !r.HostOOM) {
			return false
		}
		n++
	}
	return n > 0
}

// workRuntime is the job's total work at the rates its runs on the profile measured.
func (j judging) workRuntime(profile string) (sec, lo, hi float64, ok bool) {
	w := j.ev.workSeen
	if w.work <= 0 || shifted(j.site, profile, j.ev.runs) {
		return 0, 0, 0, false
	}
	onP := func(r Run) bool { return r.Profile == profile && reportsWork(r) && r.WorkUnit == w.workUnit }
	m, sorted, ok := medianOf(j.ev.runs, onP, func(r Run) float64 { return r.Seconds / r.Work })
	if !ok {
		return 0, 0, 0, false
	}
	return m * w.work, sorted[0] * w.work, sorted[len(sorted)-1] * w.work, true
}

// predictRuntime predicts from the completed runs, else from the work
// rates; free: no time limit bounds this profile, so the model that meets
// the bounds elsewhere applies.
func (j judging) predictRuntime(shares catalog.Shares, free bool) (sec, lo, hi float64, ok bool) {
	ev := j.ev
	if len(ev.points) > 0 {
		model := ev.scaling
		if free {
			model = ev.scalingFree
		}
		sec, lo, hi, _ = model.Predict(ev.points, shares)
		return sec, lo, hi, true
	}
	if ev.work > 0 && len(ev.workPoints) > 0 {
		sec, lo, hi, _ = ev.workScaling.Predict(ev.workPoints, shares)
		return sec * ev.work, lo * ev.work, hi * ev.work, true
	}
	return 0, 0, 0, false
}

// lowerBound is the longest time a run ran before its time limit on this
// profile or on one at least as big (a smaller slice is no faster), and that
// run in words.
func (j judging) lowerBound(pa *ProfileAdvice) (float64, string) {
	lower, words := 0.0, ""
	for _, r := range j.ev.runs {
		if !r.TimedOut || r.Seconds <= lower {
			continue
		}
		p, ok := j.site.Profile(r.Profile)
		if !ok || r.Profile != pa.Profile && j.site.Capacity(p) < pa.capacity {
			continue
		}
		lower = r.Seconds
		words = fmt.Sprintf("ran past its time limit here after %s", slurm.FormatSeconds(r.Seconds))
		if r.Profile != pa.Profile {
			words = fmt.Sprintf("ran past its time limit on %s, a bigger profile, after %s", r.Profile, slurm.FormatSeconds(r.Seconds))
		}
	}
	return lower, words
}

// charge applies the SU formula to the runtime, and to the time per unit of
// work. A profile the formula cannot price is said so, in the profile's
// Unpriced and the note returned, and is not eligible: with no figure its
// SU would read as 0, the cheapest of all.
func (j judging) charge(pa *ProfileAdvice, p *catalog.Profile) string {
	job := j.ev.base
	job.Profile, job.GPUs, job.Partition, job.Hours = p, j.ev.multiGPU.gpusOn(p), j.partitionFor(p), 1
	pa.Partition = job.Partition
	rate, err := chargeJob(j.site, job)
	if err != nil {
		pa.Unpriced = fmt.Sprintf("no price: the site's SU formula failed on %s: %v", p.Name, err)
		return fmt.Sprintf("%s has no price (the site's SU formula failed: %v), so it is not recommended", p.Name, err)
	}
	pa.SUPerHour = round4(rate.SUPerHour)
	if pa.RuntimeS != nil {
		pa.SU = ptr(catalog.RoundSU(rate.SUPerHour * *pa.RuntimeS / 3600))
	}
	perWork, ok := j.secondsPerWork(pa)
	if pa.RuntimeS != nil && j.ev.work > 0 {
		// The runtime over the job's work: the two columns agree, bounds included.
		perWork, ok = *pa.RuntimeS/j.ev.work, true
	}
	if ok {
		// Scaled to a unit people read, and rounded, by scaleWork.
		pa.SUPerWork, pa.WorkUnit = ptr(rate.SUPerHour*perWork/3600), j.ev.workUnit
	}
	return ""
}

// secondsPerWork is the profile's time per unit of work: measured on it
// (completed or time-capped runs count alike), else predicted.
func (j judging) secondsPerWork(pa *ProfileAdvice) (float64, bool) {
	w := j.ev.workSeen
	for _, pt := range w.workPoints {
		if pt.Profile == pa.Profile {
			return pt.Seconds, true
		}
	}
	if len(w.workPoints) == 0 {
		return 0, false
	}
	sec, _, _, _ := w.workScaling.Predict(w.workPoints, pa.shares)
	return sec, true
}

// round4 keeps four significant digits: SU per sample can be 1e-5.
func round4(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	scale := math.Pow(10, 4-math.Ceil(math.Log10(math.Abs(x))))
	return math.Round(x*scale) / scale
}

// timeLimit checks the runtime against the script's --time and suggests one
// that covers the whole range; one beyond the partition's limit cannot be
// asked for, whatever the script asks for (or if it asks for none), and
// the profile is then out.
func (j judging) timeLimit(pa *ProfileAdvice, p *catalog.Profile) {
	limit := j.job.Resources.Time
	if j.ev.budget > 0 && pa.Runs > 0 && pa.TimedOut == pa.Runs {
		return // its runs here take the time they are given
	}
	if pa.RuntimeAtLeast {
		j.boundTimeLimit(pa, p)
		return
	}
	if j.ev.budget > 0 {
		j.budgetTimeLimit(pa, p)
		return
	}
	if pa.RuntimeRangeS == nil {
		return
	}
	hi, need := pa.RuntimeRangeS[1], suggestTime(pa.RuntimeRangeS[1])
	max, ok := j.site.MaxWalltimeFor(j.partitionFor(p))
	capped := ok && !max.Unlimited
	if capped && hi > max.Duration.Seconds() {
		// Whatever the script asks for, or if it asks for nothing: the
		// partition's limit is the most any run there gets.
		beyondLimit(pa, max)
		return
	}
	if capped && need > max.Duration {
		need = max.Duration // the range fits; its margin goes as far as the partition allows
	}
	if !limit.IsSet() || limit.Unlimited && !capped {
		return
	}
	if limit.Unlimited || limit.Duration.Seconds() < hi || capped && limit.Duration > max.Duration {
		// Too short for the run, or more than the partition allows
		// (sbatch refuses the script): the --time that covers the range.
		pa.TimeLimit = slurm.FormatDuration(need)
	}
}

// budgetTimeLimit is the --time of a time-budgeted job (every run ran to
// its limit) on a profile it has not run to that limit: the time its
// run's work is predicted to take there. The job runs until its limit, so
// the --time is what a run costs: a longer one buys more work at the
// price of more SU, not the same work with a margin.
func (j judging) budgetTimeLimit(pa *ProfileAdvice, p *catalog.Profile) {
	if pa.RuntimeS == nil || *pa.RuntimeS <= 0 {
		return
	}
	need := fiveMinutesUp(*pa.RuntimeS)
	if max, ok := j.site.MaxWalltimeFor(j.partitionFor(p)); ok && !max.Unlimited && need > max.Duration {
		beyondLimit(pa, max)
		return
	}
	if limit := j.job.Resources.Time; limit.Unlimited || !limit.IsSet() || limit.Duration != need {
		pa.TimeLimit = slurm.FormatDuration(need)
	}
}

// beyondLimit marks a profile whose predicted runtime range needs more
// time than the partition allows; no --time it proposes passes that limit
// (sbatch would refuse the job). Where the predicted runtime itself fits,
// a run may finish within the limit, which is the most it may ask for;
// where it does not, no run there can finish, and none is proposed.
func beyondLimit(pa *ProfileAdvice, max slurm.TimeLimit) {
	if *pa.RuntimeS <= max.Duration.Seconds() {
		pa.TimeLimit = slurm.FormatDuration(max.Duration)
		pa.beyondLimit = fmt.Sprintf("its predicted runtime reaches %s at the slow end of its range, beyond the partition's limit of %s: a run there may not finish",
			slurm.FormatSeconds(pa.RuntimeRangeS[1]), max)
		return
	}
	pa.TimeLimit, pa.pastLimit = "", true
	pa.beyondLimit = fmt.Sprintf("predicted to run %s there, beyond the partition's limit of %s: the job does not fit that profile's time limit (a shorter run, of fewer steps, would measure its speed there)",
		slurm.FormatSeconds(*pa.RuntimeS), max)
}

// boundTimeLimit suggests the --time for a profile whose runtime is only a
// lower bound (a run reached its time limit): twice the bound, so that the
// next run can complete and be measured, within the partition's limit.
func (j judging) boundTimeLimit(pa *ProfileAdvice, p *catalog.Profile) {
	bound := pa.RuntimeRangeS[1]
	need := fiveMinutesUp(2 * bound)
	if max, ok := j.site.MaxWalltimeFor(j.partitionFor(p)); ok && !max.Unlimited && need > max.Duration {
		if max.Duration.Seconds() <= bound {
			pa.beyondLimit = fmt.Sprintf("ran to the partition's limit of %s without completing", max)
			pa.pastLimit = true
			return
		}
		need = max.Duration
	}
	if limit := j.job.Resources.Time; limit.Unlimited || limit.IsSet() && limit.Duration >= need {
		return // the script asks for enough already
	}
	pa.TimeLimit = slurm.FormatDuration(need)
}

// suggestTime is a --time with a fifth more than the longest expected run,
// rounded up to five minutes.
func suggestTime(seconds float64) time.Duration {
	return fiveMinutesUp(seconds * 1.2)
}

// fiveMinutesUp is a --time of seconds, rounded up to five minutes.
func fiveMinutesUp(seconds float64) time.Duration {
	const step = 300
	return time.Duration(math.Ceil(seconds/step)*step) * time.Second
}

// partitionFor is where the job would run on the profile: the script's
// partition when the profile is offered there, else the profile's first.
func (j judging) partitionFor(p *catalog.Profile) string {
	base := j.ev.base
	if base.Partition == "" || !slices.Contains(p.Partitions, base.Partition) {
		if len(p.Partitions) > 0 {
			return p.Partitions[0]
		}
	}
	return base.Partition
}

// failedOnly says why a profile where the job failed, and never completed,
// for a reason other than memory or time is not advised: the evidence there
// is a failure nobody has explained.
func failedOnly(profile string, runs []Run) string {
	failed, state := 0, ""
	for _, r := range runs {
		switch {
		case r.Profile != profile:
		case r.Completed:
			return ""
		case r.State == "FAILED" && !r.GPUOOM && !r.HostOOM && !r.TimedOut:
			failed++
			state = fmt.Sprintf("%s with exit code %d", r.State, r.ExitCode)
		}
	}
	switch failed {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("failed here (%s) and never completed: see the job's output", state)
	}
	return fmt.Sprintf("failed here (%s, %d runs) and never completed: see the job's output", state, failed)
}

// eligibility decides whether the profile may be recommended, and says why:
// it can run the job and is priced, its OOM risk is low, and its runtime
// is known within its partition's time limit.
func (j judging) eligibility(pa *ProfileAdvice) (bool, string) {
	switch {
	case pa.excluded != "":
		return false, pa.excluded
	case pa.Unpriced != "":
		return false, pa.Unpriced
	case riskWords(pa.OOMRisk) != "":
		return false, riskWords(pa.OOMRisk) + pa.OOMRiskReason
	}
	if failed := failedOnly(pa.Profile, j.ev.runs); failed != "" {
		return false, failed
	}
	if why := j.noRuntime(pa); why != "" {
		return false, why
	}
	if pa.TimeLimit != "" && j.ev.budget > 0 {
		return true, fmt.Sprintf("low OOM risk; a run's work takes about %s there: --time=%s, where the script asks for %s (a run goes on to its limit, and costs it)",
			slurm.FormatSeconds(*pa.RuntimeS), pa.TimeLimit, j.job.Resources.Time)
	}
	if pa.TimeLimit != "" {
		return true, fmt.Sprintf("low OOM risk; needs --time=%s, the script asks for %s", pa.TimeLimit, j.job.Resources.Time)
	}
	return true, "low OOM risk: " + pa.OOMRiskReason
}

// riskWords opens the reason a risk rules a profile out with; "" for a
// risk that does not (low).
func riskWords(level string) string {
	switch level {
	case memory.RiskHigh:
		return "high OOM risk: "
	case memory.RiskMedium:
		return "medium OOM risk: "
	case memory.RiskUnknown:
		return "OOM risk unknown: "
	}
	return ""
}

// noRuntime says why the profile's runtime is no answer: unknown, only a
// bound, predicted where every run reached its limit, or beyond the
// partition's limit; "" where it is one.
func (j judging) noRuntime(pa *ProfileAdvice) string {
	switch {
	case pa.RuntimeS == nil:
		if r, ok := emulatedElsewhere(j.ev.runs); ok {
			return fmt.Sprintf("runtime unknown on the site's GPU: the runs were emulated on %s", r.Emulated)
		}
		return "runtime unknown: no completed run to scale from"
	case pa.RuntimeAtLeast && pa.Completed > 0:
		return fmt.Sprintf("it %s, so the median runtime here is at least %s: its runs vary, so measure it again with a longer --time",
			pa.boundBy, slurm.FormatSeconds(*pa.RuntimeS))
	case pa.RuntimeAtLeast:
		return fmt.Sprintf("%s, so its runtime is at least that; no run completed here: measure it with a longer --time", pa.boundBy)
	case pa.onlyCapped:
		return "every run here reached its time limit or failed, so a predicted time is no answer: measure it with a longer --time"
	}
	return pa.beyondLimit
}

// rateSpread is the spread of the time per unit of work of the runs on
// profile that reported their work, where the job's runs did different
// amounts of it (no one work): then their runtimes differ by their work,
// and only their rates tell the run-to-run noise. nil where that is not so.
func rateSpread(profile string, runs []Run, w workSeen) *float64 {
	if w.work > 0 || w.workUnit == "" {
		return nil
	}
	var rates []float64
	for _, r := range runs {
		if r.Profile == profile && r.Completed && r.Work > 0 && r.Seconds > 0 && r.WorkUnit == w.workUnit {
			rates = append(rates, r.Seconds/r.Work)
		}
	}
	if len(rates) < noiseRuns {
		return nil
	}
	slices.Sort(rates)
	m := rates[len(rates)/2]
	return ptr(math.Round(100*(rates[len(rates)-1]-rates[0])/m) / 100)
}

// profileNamed is the advice on the named profile, nil where there is none.
func profileNamed(profiles []ProfileAdvice, name string) *ProfileAdvice {
	for i := range profiles {
		if profiles[i].Profile == name {
			return &profiles[i]
		}
	}
	return nil
}

// scaleWork writes SU per unit of work in the multiple WorkScale picks,
// the same for every profile, rounded.
func scaleWork(profiles []ProfileAdvice) []ProfileAdvice {
	var figures []float64
	for _, pa := range profiles {
		if pa.SUPerWork != nil {
			figures = append(figures, *pa.SUPerWork)
		}
	}
	if len(figures) == 0 {
		return profiles
	}
	factor, prefix := WorkScale(figures)
	out := slices.Clone(profiles)
	for i := range out {
		if pa := &out[i]; pa.SUPerWork != nil {
			pa.SUPerWork = ptr(catalog.RoundSU(*pa.SUPerWork * factor))
			pa.WorkUnit = WorkUnitText(prefix + pa.WorkUnit)
		}
	}
	return out
}
