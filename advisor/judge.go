package advisor

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// judge weighs one profile: OOM risk, runtime, SU, time limit, queue wait.
func (a *analysis) judge(p *catalog.Profile) ProfileAdvice {
	pa := ProfileAdvice{Profile: p.Name, UsableMiB: math.Round(p.UsableMemory.MiB()), capacity: a.site.Capacity(p),
		OOMRisk: RiskUnknown}
	for _, r := range a.runs {
		if r.Profile != p.Name {
			continue
		}
		pa.Runs++
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
	}
	if a.need.Known() {
		pa.GPUMemNeedMiB = ptr(math.Round(a.need.MiB))
	}
	risk := OOMRisk(p.Name, p.UsableMemory.MiB(), a.memRuns, a.need, a.opt.LowRiskShare)
	pa.OOMRisk, pa.OOMRiskReason = risk.Level, a.fromPrior(risk.Reason)
	a.runtime(&pa)
	a.charge(&pa, p)
	a.timeLimit(&pa, p)
	if w, ok := a.job.QueueWaitS[p.Name]; ok {
		pa.QueueWaitS = ptr(math.Round(w))
	}
	pa.Eligible, pa.Reason = a.eligibility(&pa)
	return pa
}

func ptr[T any](v T) *T { return &v }

// fromPrior marks a judgement made on a reference benchmark's runs.
func (a *analysis) fromPrior(reason string) string {
	if a.basis == BasisPrior {
		return "reference benchmark: " + reason
	}
	return reason
}

// runtime sets the profile's runtime: the median of its completed runs; else
// the job's total work at the rate measured here (time-capped runs count);
// else predicted from the other profiles. Never below the longest run that
// hit its time limit here.
func (a *analysis) runtime(pa *ProfileAdvice) {
	completed := func(r Run) bool { return r.Profile == pa.Profile && r.Completed && r.Seconds > 0 }
	if m, sorted, ok := medianOf(a.runs, completed, func(r Run) float64 { return r.Seconds }); ok {
		pa.RuntimeS, pa.RuntimeRangeS = ptr(m), &[2]float64{sorted[0], sorted[len(sorted)-1]}
		pa.RuntimeSource = a.basis
		return
	}
	sec, lo, hi, ok := a.workRuntime(pa.Profile)
	if !ok {
		sec, lo, hi, ok = a.predictRuntime(pa.capacity)
	}
	if !ok {
		return
	}
	lower := a.lowerBound(pa.Profile)
	pa.RuntimeS, pa.RuntimeRangeS = ptr(max(sec, lower)), &[2]float64{max(lo, lower), max(hi, lower)}
	pa.RuntimeSource = BasisPredicted
	if a.basis == BasisPrior {
		pa.RuntimeSource = BasisPrior
	}
}

// workRuntime is the job's total work at the rates its runs on the profile measured.
func (a *analysis) workRuntime(profile string) (sec, lo, hi float64, ok bool) {
	if a.work <= 0 {
		return 0, 0, 0, false
	}
	onP := func(r Run) bool {
		return r.Profile == profile && r.Work > 0 && r.Seconds > 0 && r.WorkUnit == a.workUnit
	}
	m, sorted, ok := medianOf(a.runs, onP, func(r Run) float64 { return r.Seconds / r.Work })
	if !ok {
		return 0, 0, 0, false
	}
	return m * a.work, sorted[0] * a.work, sorted[len(sorted)-1] * a.work, true
}

func (a *analysis) predictRuntime(capacity float64) (sec, lo, hi float64, ok bool) {
	if len(a.points) > 0 {
		sec, lo, hi, _ = a.scaling.Predict(a.points, capacity)
		return sec, lo, hi, true
	}
	if a.work > 0 && len(a.workPoints) > 0 {
		sec, lo, hi, _ = a.workScaling.Predict(a.workPoints, capacity)
		return sec * a.work, lo * a.work, hi * a.work, true
	}
	return 0, 0, 0, false
}

// lowerBound is the longest time a run on the profile ran before its limit.
func (a *analysis) lowerBound(profile string) float64 {
	lower := 0.0
	for _, r := range a.runs {
		if r.Profile == profile && r.TimedOut {
			lower = max(lower, r.Seconds)
		}
	}
	return lower
}

// charge applies the SU formula to the runtime, and to the time per unit of work.
func (a *analysis) charge(pa *ProfileAdvice, p *catalog.Profile) {
	j := a.base
	j.Profile, j.GPUs, j.Partition, j.Hours = p, 1, a.partitionFor(p), 1
	pa.Partition = j.Partition
	rate, err := a.site.Charge(j)
	if err != nil {
		return
	}
	pa.SUPerHour = round4(rate.SUPerHour)
	if pa.RuntimeS != nil {
		pa.SU = ptr(round4(rate.SUPerHour * *pa.RuntimeS / 3600))
	}
	if perWork, ok := a.secondsPerWork(pa); ok {
		pa.SUPerWork, pa.WorkUnit = ptr(round4(rate.SUPerHour*perWork/3600)), a.workUnit
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
	sec, _, _, _ := a.workScaling.Predict(a.workPoints, pa.capacity)
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
// asked for, and the profile is then out.
func (a *analysis) timeLimit(pa *ProfileAdvice, p *catalog.Profile) {
	limit := a.job.Resources.Time
	if !limit.IsSet() || limit.Unlimited || pa.RuntimeRangeS == nil || pa.RuntimeRangeS[1] <= limit.Duration.Seconds() {
		return
	}
	need := suggestTime(pa.RuntimeRangeS[1])
	pa.TimeLimit = slurm.FormatDuration(need)
	if max, ok := a.site.MaxWalltimeFor(a.partitionFor(p)); ok && !max.Unlimited && need > max.Duration {
		pa.beyondLimit = fmt.Sprintf("needs --time=%s, beyond the partition's limit of %s", pa.TimeLimit, max)
	}
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
	switch pa.OOMRisk {
	case RiskHigh:
		return false, "high OOM risk: " + pa.OOMRiskReason
	case RiskMedium:
		return false, "medium OOM risk: " + pa.OOMRiskReason
	case RiskUnknown:
		return false, "OOM risk unknown: no GPU memory evidence"
	}
	if failed := a.failedOnly(pa.Profile); failed != "" {
		return false, failed
	}
	if pa.RuntimeS == nil {
		if lower := a.lowerBound(pa.Profile); lower > 0 {
			return false, fmt.Sprintf("runtime unknown: ran past its time limit (%s) and no run completed anywhere", slurm.FormatSeconds(lower))
		}
		return false, "runtime unknown: no completed run to scale from"
	}
	if pa.beyondLimit != "" {
		return false, pa.beyondLimit
	}
	if pa.TimeLimit != "" {
		return true, fmt.Sprintf("low OOM risk; needs --time=%s (the script asks for %s)", pa.TimeLimit, a.job.Resources.Time)
	}
	return true, "low OOM risk: " + pa.OOMRiskReason
}
