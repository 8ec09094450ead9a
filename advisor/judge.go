package advisor

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/migadvisor/migadvisor/advisor/memory"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// judge weighs one profile: OOM risk, runtime, SU, time limit, queue wait.
func (a *analysis) judge(p *catalog.Profile) ProfileAdvice {
	pa := ProfileAdvice{Profile: p.Name, UsableMiB: math.Round(p.UsableMemory.MiB()), capacity: a.site.Capacity(p), shares: a.site.Shares(p),
		OOMRisk: memory.RiskUnknown}
	for _, r := range a.runs {
		if r.Profile != p.Name {
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
	if a.need.Known() {
		pa.GPUMemNeedMiB = ptr(math.Round(a.need.MiB))
	}
	if c := a.need.Ceiling; c != nil && (!a.need.Known() || c.MiB > a.need.MiB) {
		pa.GPUMemCeilingMiB = ptr(math.Round(c.MiB))
	}
	risk := memory.OOMRisk(p.Name, p.UsableMemory.MiB(), a.memRuns, a.need, a.opt.LowRiskShare)
	pa.OOMRisk, pa.OOMRiskReason = risk.Level, a.fromPrior(risk.Reason)
	a.runtime(&pa)
	a.charge(&pa, p)
	a.timeLimit(&pa, p)
	if w, ok := a.job.QueueWaitS[p.Name]; ok {
		pa.QueueWaitS = ptr(math.Round(w))
	}
	pa.excluded = a.multiGPU.exclusion(p)
	if pa.excluded != "" {
		// It cannot run the job: no figure of it means anything.
		pa.OOMRisk, pa.OOMRiskReason, pa.GPUMemNeedMiB, pa.GPUMemCeilingMiB = memory.RiskNone, pa.excluded, nil, nil
		pa.RuntimeS, pa.RuntimeRangeS, pa.RuntimeSource, pa.RuntimeAtLeast, pa.SU, pa.SUPerWork, pa.TimeLimit = nil, nil, "", false, nil, nil, ""
	}
	pa.Eligible, pa.Reason = a.eligibility(&pa)
	return pa
}

func ptr[T any](v T) *T { return &v }

// fromPrior marks a judgement made on a reference benchmark's runs.
func (a *analysis) fromPrior(reason string) string {
	if a.basis == BasisPrior {
		return "in the reference benchmark, " + reason
	}
	return reason
}

// runtime sets the profile's runtime: the median of its completed runs; else
// the job's total work at the rate measured here (time-capped runs count);
// else predicted from the other profiles. Never below a run that reached its
// time limit here or on a bigger profile: such a time is a proven lower
// bound, and a runtime that rests on it is marked "at least".
func (a *analysis) runtime(pa *ProfileAdvice) {
	if m, sorted, bound, ok := a.measuredRuntime(a.site, pa.Profile); ok {
		if bound > 0 {
			pa.RuntimeAtLeast = true
			pa.boundBy = fmt.Sprintf("ran past its time limit here after %s in %s of its %s", slurm.FormatSeconds(bound),
				plural(pa.TimedOut, "run"), plural(len(sorted), "run"))
		}
		pa.RuntimeS, pa.RuntimeRangeS = ptr(roundSeconds(m)), &[2]float64{roundSeconds(sorted[0]), roundSeconds(sorted[len(sorted)-1])}
		pa.RuntimeSource = a.basis
		if a.basis == BasisPrior {
			return // one reference measurement, not the job's runs
		}
		pa.RuntimeRuns = len(sorted)
		if len(sorted) > 1 {
			pa.RuntimeSpread = ptr(math.Round(100*(sorted[len(sorted)-1]-sorted[0])/m) / 100)
		}
		pa.rateSpread = a.rateSpread(pa.Profile)
		return
	}
	lower, bound := a.lowerBound(pa)
	pa.boundBy = bound
	sec, lo, hi, ok := a.workRuntime(pa.Profile)
	pa.onlyCapped = !ok && a.cappedOnly(pa.Profile)
	if !ok {
		sec, lo, hi, ok = a.predictRuntime(pa.shares, lower == 0)
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
	if a.basis == BasisPrior {
		pa.RuntimeSource = BasisPrior
	}
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
func (a *analysis) cappedOnly(profile string) bool {
	runs := 0
	for _, r := range a.runs {
		if r.Profile != profile {
			continue
		}
		if r.Completed || !r.TimedOut && !(r.State == "FAILED" && !r.GPUOOM && !r.HostOOM) {
			return false
		}
		runs++
	}
	return runs > 0
}

// workRuntime is the job's total work at the rates its runs on the profile measured.
func (a *analysis) workRuntime(profile string) (sec, lo, hi float64, ok bool) {
	if a.work <= 0 || shifted(a.site, profile, a.runs) {
		return 0, 0, 0, false
	}
	onP := func(r Run) bool {
		return r.Profile == profile && r.Work > 0 && r.Seconds > 0 && r.WorkUnit == a.workUnit && (r.Completed || r.TimedOut)
	}
	m, sorted, ok := medianOf(a.runs, onP, func(r Run) float64 { return r.Seconds / r.Work })
	if !ok {
		return 0, 0, 0, false
	}
	return m * a.work, sorted[0] * a.work, sorted[len(sorted)-1] * a.work, true
}

// predictRuntime predicts from the completed runs, else from the work
// rates; free: no time limit bounds this profile, so the model that meets
// the bounds elsewhere applies.
func (a *analysis) predictRuntime(shares catalog.Shares, free bool) (sec, lo, hi float64, ok bool) {
	if len(a.points) > 0 {
		model := a.scaling
		if free {
			model = a.scalingFree
		}
		sec, lo, hi, _ = model.Predict(a.points, shares)
		return sec, lo, hi, true
	}
	if a.work > 0 && len(a.workPoints) > 0 {
		sec, lo, hi, _ = a.workScaling.Predict(a.workPoints, shares)
		return sec * a.work, lo * a.work, hi * a.work, true
	}
	return 0, 0, 0, false
}

// lowerBound is the longest time a run ran before its time limit on this
// profile or on one at least as big (a smaller slice is no faster), and that
// run in words.
func (a *analysis) lowerBound(pa *ProfileAdvice) (float64, string) {
	lower, words := 0.0, ""
	for _, r := range a.runs {
		if !r.TimedOut || r.Seconds <= lower {
			continue
		}
		p, ok := a.site.Profile(r.Profile)
		if !ok || r.Profile != pa.Profile && a.site.Capacity(p) < pa.capacity {
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

// chargeJob is the SU formula: Site.Charge, which a test replaces to see a
// price fail.
var chargeJob = (*catalog.Site).Charge

// charge applies the SU formula to the runtime, and to the time per unit of
// work. A profile the formula cannot price is said so, in the profile's
// Unpriced and a note, and is not eligible: with no figure its SU would
// read as 0, the cheapest of all.
func (a *analysis) charge(pa *ProfileAdvice, p *catalog.Profile) {
	j := a.base
	j.Profile, j.GPUs, j.Partition, j.Hours = p, a.multiGPU.gpusOn(p), a.partitionFor(p), 1
	pa.Partition = j.Partition
	rate, err := chargeJob(a.site, j)
	if err != nil {
		pa.Unpriced = fmt.Sprintf("no price: the site's SU formula failed on %s: %v", p.Name, err)
		a.note("%s has no price (the site's SU formula failed: %v), so it is not recommended", p.Name, err)
		return
	}
	pa.SUPerHour = round4(rate.SUPerHour)
	if pa.RuntimeS != nil {
		pa.SU = ptr(catalog.RoundSU(rate.SUPerHour * *pa.RuntimeS / 3600))
	}
	perWork, ok := a.secondsPerWork(pa)
	if pa.RuntimeS != nil && a.work > 0 {
		// The runtime over the job's work: the two columns agree, bounds included.
		perWork, ok = *pa.RuntimeS/a.work, true
	}
	if ok {
		// Scaled to a unit people read, and rounded, by scaleWork.
		pa.SUPerWork, pa.WorkUnit = ptr(rate.SUPerHour*perWork/3600), a.workUnit
	}
}

// secondsPerWork is the profile's time per unit of work: measured on it
// (completed or time-capped runs count alike), else predicted.
func (a *analysis) secondsPerWork(pa *ProfileAdvice) (float64, bool) {
	for _, pt := range a.workPoints {
		if pt.Profile == pa.Profile {
			return pt.Seconds, true
		}
	}
	if len(a.workPoints) == 0 {
		return 0, false
	}
	sec, _, _, _ := a.workScaling.Predict(a.workPoints, pa.shares)
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
func (a *analysis) timeLimit(pa *ProfileAdvice, p *catalog.Profile) {
	limit := a.job.Resources.Time
	if a.budget > 0 && pa.Runs > 0 && pa.TimedOut == pa.Runs {
		return // its runs here take the time they are given
	}
	if pa.RuntimeAtLeast {
		a.boundTimeLimit(pa, p)
		return
	}
	if pa.RuntimeRangeS == nil || limit.IsSet() && !limit.Unlimited && pa.RuntimeRangeS[1] <= limit.Duration.Seconds() {
		return
	}
	need := suggestTime(pa.RuntimeRangeS[1])
	if max, ok := a.site.MaxWalltimeFor(a.partitionFor(p)); ok && !max.Unlimited && need > max.Duration {
		// Whatever the script asks for, or if it asks for nothing: the
		// partition's limit is the most any run there gets.
		a.beyondLimit(pa, max)
		return
	}
	if limit.IsSet() && !limit.Unlimited {
		pa.TimeLimit = slurm.FormatDuration(need)
	}
}

// beyondLimit marks a profile whose predicted runtime range needs more
// time than the partition allows; no --time it proposes passes that limit
// (sbatch would refuse the job). Where the predicted runtime itself fits,
// a run may finish within the limit, which is the most it may ask for;
// where it does not, no run there can finish, and none is proposed.
func (a *analysis) beyondLimit(pa *ProfileAdvice, max slurm.TimeLimit) {
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
func (a *analysis) boundTimeLimit(pa *ProfileAdvice, p *catalog.Profile) {
	const step = 300
	bound := pa.RuntimeRangeS[1]
	need := time.Duration(math.Ceil(2*bound/step)*step) * time.Second
	if max, ok := a.site.MaxWalltimeFor(a.partitionFor(p)); ok && !max.Unlimited && need > max.Duration {
		if max.Duration.Seconds() <= bound {
			pa.beyondLimit = fmt.Sprintf("ran to the partition's limit of %s without completing", max)
			pa.pastLimit = true
			return
		}
		need = max.Duration
	}
	if limit := a.job.Resources.Time; limit.Unlimited || limit.IsSet() && limit.Duration >= need {
		return // the script asks for enough already
	}
	pa.TimeLimit = slurm.FormatDuration(need)
}

// suggestTime is a --time with a fifth more than the longest expected run,
// rounded up to five minutes.
func suggestTime(seconds float64) time.Duration {
	const step = 300
	return time.Duration(math.Ceil(seconds*1.2/step)*step) * time.Second
}

// partitionFor is where the job would run on the profile: the script's
// partition when the profile is offered there, else the profile's first.
func (a *analysis) partitionFor(p *catalog.Profile) string {
	if a.base.Partition == "" || !slices.Contains(p.Partitions, a.base.Partition) {
		if len(p.Partitions) > 0 {
			return p.Partitions[0]
		}
	}
	return a.base.Partition
}

// failedOnly says why a profile where the job failed, and never completed,
// for a reason other than memory or time is not advised: the evidence there
// is a failure nobody has explained.
func (a *analysis) failedOnly(profile string) string {
	failed, state := 0, ""
	for _, r := range a.runs {
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

// eligibility decides whether the profile may be recommended, and says why.
func (a *analysis) eligibility(pa *ProfileAdvice) (bool, string) {
	if pa.excluded != "" {
		return false, pa.excluded
	}
	if pa.Unpriced != "" {
		return false, pa.Unpriced
	}
	switch pa.OOMRisk {
	case memory.RiskHigh:
		return false, "high OOM risk: " + pa.OOMRiskReason
	case memory.RiskMedium:
		return false, "medium OOM risk: " + pa.OOMRiskReason
	case memory.RiskUnknown:
		return false, "OOM risk unknown: " + pa.OOMRiskReason
	}
	if failed := a.failedOnly(pa.Profile); failed != "" {
		return false, failed
	}
	switch {
	case pa.RuntimeS == nil:
		if r, ok := emulatedElsewhere(a.runs); ok {
			return false, fmt.Sprintf("runtime unknown on the site's GPU: the runs were emulated on %s", r.Emulated)
		}
		return false, "runtime unknown: no completed run to scale from"
	case pa.RuntimeAtLeast && pa.Completed > 0:
		return false, fmt.Sprintf("it %s, so the median runtime here is at least %s: its runs vary, so measure it again with a longer --time",
			pa.boundBy, slurm.FormatSeconds(*pa.RuntimeS))
	case pa.RuntimeAtLeast:
		return false, fmt.Sprintf("%s, so its runtime is at least that; no run completed here: measure it with a longer --time", pa.boundBy)
	case pa.onlyCapped:
		return false, "every run here reached its time limit or failed, so a predicted time is no answer: measure it with a longer --time"
	case pa.beyondLimit != "":
		return false, pa.beyondLimit
	case pa.TimeLimit != "":
		return true, fmt.Sprintf("low OOM risk; needs --time=%s, the script asks for %s", pa.TimeLimit, a.job.Resources.Time)
	}
	return true, "low OOM risk: " + pa.OOMRiskReason
}

// rateSpread is the spread of the time per unit of work of the runs on
// profile that reported their work, where the job's runs did different
// amounts of it (a.work 0): then their runtimes differ by their work, and
// only their rates tell the run-to-run noise. nil where that is not so.
func (a *analysis) rateSpread(profile string) *float64 {
	if a.work > 0 || a.workUnit == "" {
		return nil
	}
	var rates []float64
	for _, r := range a.runs {
		if r.Profile == profile && r.Completed && r.Work > 0 && r.Seconds > 0 && r.WorkUnit == a.workUnit {
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
