package advisor

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// run is a completed run on a profile taking seconds, with unknown figures unset.
func newRun(profile string, seconds float64) Run {
	return Run{JobID: profile, Profile: profile, State: "COMPLETED", Seconds: seconds, Completed: true, NeedMiB: -1,
		PeakMiB: -1, AllocatedMiB: -1, Work: -1, Utilization: -1, MemUtilization: -1, CPUs: 1, ReqMemMiB: -1, MaxRSSMiB: -1, QueueWaitS: -1}
}

func (r Run) peak(mib float64) Run { r.PeakMiB = mib; return r }
func (r Run) work(w float64, unit string) Run {
	r.Work, r.WorkUnit = w, unit
	return r
}
func (r Run) oom(need float64) Run {
	r.Completed, r.GPUOOM, r.State, r.NeedMiB = false, true, "FAILED", need
	return r
}
func (r Run) timeout() Run {
	r.Completed, r.TimedOut, r.State = false, true, "TIMEOUT"
	return r
}

const script = "#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --cpus-per-task=1\n#SBATCH --mem=4G\n"

func recommend(t *testing.T, directives string, runs []Run, opt Options) *Recommendation {
	t.Helper()
	s := slurm.Parse("job.sh", []byte(script+directives+"srun ./train\n"))
	rec, err := Recommend(catalogtest.Wulver(t), Job{Script: "job.sh", Resources: s.Resources, Runs: runs}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func profileOf(t *testing.T, rec *Recommendation, name string) ProfileAdvice {
	t.Helper()
	for _, pa := range rec.Profiles {
		if pa.Profile == name {
			return pa
		}
	}
	t.Fatalf("no profile %s", name)
	return ProfileAdvice{}
}

func recommended(rec *Recommendation) string {
	if rec.Recommended == nil {
		return "none"
	}
	return *rec.Recommended
}

func TestCompletedOnFullOnlyPredictsTheSlices(t *testing.T) {
	// 3 GiB peak on a full GPU in an hour: every slice fits; the prior scales the time.
	rec := recommend(t, "", []Run{newRun("full", 3600).peak(3072)}, Options{})
	if got := recommended(rec); got != "1g.10gb" {
		t.Fatalf("recommended %s: %s", got, rec.Reason)
	}
	if rec.Basis != BasisPredicted {
		t.Errorf("basis %s, want predicted", rec.Basis)
	}
	small := profileOf(t, rec, "1g.10gb")
	if small.RuntimeSource != BasisPredicted || *small.RuntimeS <= 3600 || small.RuntimeRangeS[0] >= small.RuntimeRangeS[1] {
		t.Errorf("1g.10gb runtime %v %v %s", *small.RuntimeS, small.RuntimeRangeS, small.RuntimeSource)
	}
	if full := profileOf(t, rec, "full"); full.RuntimeSource != BasisMeasured || *full.RuntimeS != 3600 || *full.SU != 17 {
		t.Errorf("full: %+v", full)
	}
}

func TestNoMemoryEvidenceIsNeverLowRisk(t *testing.T) {
	rec := recommend(t, "", []Run{newRun("full", 600)}, Options{})
	for _, name := range []string{"1g.10gb", "2g.20gb", "3g.40gb"} {
		if pa := profileOf(t, rec, name); pa.OOMRisk != memory.RiskUnknown || pa.Eligible {
			t.Errorf("%s: risk %s eligible %v, want unknown and not eligible", name, pa.OOMRisk, pa.Eligible)
		}
	}
	// Completing on full is evidence for full alone.
	if got := recommended(rec); got != "full" {
		t.Errorf("recommended %s, want full", got)
	}
}

func TestMemoryMarginDecidesTheSmallestSafeProfile(t *testing.T) {
	// 8.5 GiB of 9.5 usable on 1g.10gb is 89%: medium; 2g.20gb is the pick.
	rec := recommend(t, "", []Run{newRun("full", 3600).peak(8704)}, Options{})
	if pa := profileOf(t, rec, "1g.10gb"); pa.OOMRisk != memory.RiskMedium || pa.Eligible {
		t.Errorf("1g.10gb: %s, %s", pa.OOMRisk, pa.Reason)
	}
	if got := recommended(rec); got != "2g.20gb" {
		t.Errorf("recommended %s: %s", got, rec.Reason)
	}
	// A site that accepts 95% takes the smaller slice.
	if got := recommended(recommend(t, "", []Run{newRun("full", 3600).peak(8704)}, Options{LowRiskShare: 0.93})); got != "1g.10gb" {
		t.Errorf("with a 93%% margin recommended %s", got)
	}
}

func TestOOMLadder(t *testing.T) {
	runs := []Run{newRun("1g.10gb", 60).oom(12000), newRun("2g.20gb", 60).oom(-1), newRun("3g.40gb", 1800).peak(30000)}
	rec := recommend(t, "", runs, Options{})
	for name, risk := range map[string]string{"1g.10gb": memory.RiskHigh, "2g.20gb": memory.RiskHigh, "3g.40gb": memory.RiskLow, "full": memory.RiskLow} {
		if pa := profileOf(t, rec, name); pa.OOMRisk != risk {
			t.Errorf("%s: %s (%s), want %s", name, pa.OOMRisk, pa.OOMRiskReason, risk)
		}
	}
	if got := recommended(rec); got != "3g.40gb" {
		t.Errorf("recommended %s: %s", got, rec.Reason)
	}
	// OOM on every profile: nothing, and say why.
	all := recommend(t, "", []Run{newRun("full", 60).oom(90000)}, Options{})
	if all.Recommended != nil || !strings.HasPrefix(all.Reason, "no profile fits: the job needs at least 87.9 GiB") || all.Basis != BasisNone {
		t.Errorf("OOM on full: %s / %s", recommended(all), all.Reason)
	}
}

func TestCompletedIsEvidenceItFits(t *testing.T) {
	// The NVML peak on 2g.20gb (19 GiB) is the caching allocator filling the slice; it completed, so it fits.
	rec := recommend(t, "", []Run{newRun("2g.20gb", 1000).peak(19456), newRun("3g.40gb", 700).peak(30000)}, Options{})
	if pa := profileOf(t, rec, "2g.20gb"); pa.OOMRisk != memory.RiskLow || !strings.Contains(pa.OOMRiskReason, "completed here") {
		t.Errorf("2g.20gb: %s (%s)", pa.OOMRisk, pa.OOMRiskReason)
	}
	// Its peak grew with the device (19 to 29.3 GiB): a ceiling of the
	// need, which leaves 1g.10gb unknown, not ruled out.
	if pa := profileOf(t, rec, "1g.10gb"); pa.OOMRisk != memory.RiskUnknown || !strings.Contains(pa.OOMRiskReason, "grew with the device") {
		t.Errorf("1g.10gb under a 19 GiB ceiling: %s (%s)", pa.OOMRisk, pa.OOMRiskReason)
	}
	// The same peak on both, as a code that allocates what it uses has: a
	// need, which rules 1g.10gb out.
	rec = recommend(t, "", []Run{newRun("2g.20gb", 1000).peak(19456), newRun("3g.40gb", 700).peak(19500)}, Options{})
	if pa := profileOf(t, rec, "1g.10gb"); pa.OOMRisk != memory.RiskHigh {
		t.Errorf("1g.10gb needs 19 GiB: %s (%s)", pa.OOMRisk, pa.OOMRiskReason)
	}
}

func TestTimeLimitAdvice(t *testing.T) {
	// One hour on full; the script asks for 1:10:00; slices are slower.
	rec := recommend(t, "#SBATCH --time=01:10:00\n", []Run{newRun("full", 3600).peak(2048)}, Options{})
	small := profileOf(t, rec, "1g.10gb")
	if small.TimeLimit == "" || !small.Eligible {
		t.Fatalf("1g.10gb: time limit %q, eligible %v (%s)", small.TimeLimit, small.Eligible, small.Reason)
	}
	limit, err := slurm.ParseTimeLimit(small.TimeLimit)
	if err != nil || limit.Duration.Seconds() < small.RuntimeRangeS[1] {
		t.Errorf("--time=%s does not cover the range %v", small.TimeLimit, small.RuntimeRangeS)
	}
	if full := profileOf(t, rec, "full"); full.TimeLimit != "" {
		t.Errorf("full fits its limit: %q", full.TimeLimit)
	}
	if got := recommended(rec); rec.TimeLimit == "" || got == "full" || !strings.Contains(rec.Reason, "--time="+rec.TimeLimit) {
		t.Errorf("recommended %s with --time=%q: %s", got, rec.TimeLimit, rec.Reason)
	}
	// Beyond the partition's 72 hours the risk is unresolved.
	long := recommend(t, "#SBATCH --time=3-00:00:00\n", []Run{newRun("full", 65*3600).peak(2048)}, Options{})
	if pa := profileOf(t, long, "1g.10gb"); pa.Eligible || !strings.Contains(pa.Reason, "beyond the partition's limit") {
		t.Errorf("1g.10gb for a 65 h full-GPU job: %v, %s", pa.Eligible, pa.Reason)
	}
}

// No --time the advice proposes passes the partition's 72 hours, and a
// profile no run can finish on is no probe: a 65 h job on the whole GPU,
// from a script that asks for no --time, is not sent to a slice predicted
// past the limit; one whose run on 1g.10gb reached the limit is not told
// to measure it again there.
func TestNoTimePastThePartitionsLimit(t *testing.T) {
	const max = 72 * time.Hour
	check := func(what string, rec *Recommendation) {
		t.Helper()
		times := []string{rec.TimeLimit, rec.NextStep.Time}
		for _, pa := range rec.Profiles {
			times = append(times, pa.TimeLimit)
		}
		for _, tm := range times {
			if d, err := slurm.ParseTimeLimit(tm); tm != "" && (err != nil || d.Duration > max) {
				t.Errorf("%s: proposes --time=%s, past 3-00:00:00 (next: %s)", what, tm, rec.Next)
			}
		}
	}
	long := recommend(t, "", []Run{newRun("full", 65*3600).peak(2048)}, Options{})
	check("a 65 h job", long)
	if pa := profileOf(t, long, "1g.10gb"); pa.Eligible || !pa.PastTimeLimit() || !strings.Contains(pa.Reason, "beyond the partition's limit") {
		t.Errorf("1g.10gb for a 65 h full-GPU job with no --time: eligible %v, past %v: %s", pa.Eligible, pa.PastTimeLimit(), pa.Reason)
	}
	stuck := recommend(t, "#SBATCH --time=3-00:00:00\n", []Run{newRun("1g.10gb", 72*3600).peak(2048).timeout()}, Options{})
	check("a run that reached 72 h on 1g.10gb", stuck)
	if slices.Contains(stuck.NextStep.Profiles, "1g.10gb") || stuck.NextStep.Kind == NextProbe && len(stuck.NextStep.Profiles) == 0 {
		t.Errorf("1g.10gb ran to the partition's limit, yet the next step measures it there: %s (%s)", stuck.Next, stuck.Reason)
	}
}

func TestTimeoutIsALowerBound(t *testing.T) {
	runs := []Run{newRun("full", 600).peak(1024), newRun("1g.10gb", 900).peak(1024).timeout()}
	rec := recommend(t, "#SBATCH --time=15:00\n", runs, Options{})
	small := profileOf(t, rec, "1g.10gb")
	if small.RuntimeS == nil || *small.RuntimeS < 900 || small.RuntimeRangeS[0] < 900 || small.TimedOut != 1 {
		t.Fatalf("1g.10gb after a 15-minute TIMEOUT: %+v", small)
	}
	if small.TimeLimit == "" {
		t.Error("a profile that timed out needs a longer --time")
	}
	// Timeouts alone give no runtime: measure with a longer limit.
	only := recommend(t, "#SBATCH --time=15:00\n", []Run{newRun("1g.10gb", 900).peak(1024).timeout()}, Options{})
	// The probe and the change ask for twice the proven bound.
	if only.Recommended != nil || !strings.Contains(only.Next, "--probe --profiles 1g.10gb --time 00:30:00") ||
		!strings.Contains(only.Reason, "ask for --time=00:30:00") || only.TimeLimit != "00:30:00" {
		t.Errorf("timeouts only: %s; next %q; %s", recommended(only), only.Next, only.Reason)
	}
}

func TestWorkRateOfTimeCappedProbes(t *testing.T) {
	// Ten-minute probes capped by --time: the full GPU did 6× the work of 1g.10gb for 5.7× the SU/h.
	runs := []Run{newRun("1g.10gb", 600).peak(2048).work(100, "step").timeout(), newRun("full", 600).peak(2048).work(600, "step").timeout()}
	rec := recommend(t, "#SBATCH --time=10:00\n", runs, Options{})
	small, full := profileOf(t, rec, "1g.10gb"), profileOf(t, rec, "full")
	// 3 SU/h at 6 s a step is 0.005 SU a step: shown per 1k steps.
	if small.SUPerWork == nil || full.SUPerWork == nil || small.WorkUnit != "1k step" {
		t.Fatalf("SU per step: 1g.10gb %v, full %v", small.SUPerWork, full.SUPerWork)
	}
	// 3 SU/h at 6 s a step against 17 SU/h at 1 s: full is cheaper per step.
	if *full.SUPerWork >= *small.SUPerWork {
		t.Errorf("full %.4f SU/step should beat 1g.10gb %.4f", *full.SUPerWork, *small.SUPerWork)
	}
	// No run completed: total runtime is unknown, so nothing is recommended yet.
	if rec.Recommended != nil {
		t.Errorf("recommended %s without a completed run", recommended(rec))
	}
	// Once a completed run gives the total work, the work rate predicts every runtime.
	runs = append(runs, newRun("3g.40gb", 4500).peak(2048).work(3000, "step"))
	rec = recommend(t, "#SBATCH --time=2:00:00\n", runs, Options{})
	if rec.Recommended == nil {
		t.Errorf("nothing recommended: %s", rec.Reason)
	}
	for name, want := range map[string]float64{"1g.10gb": 3000 * 6, "full": 3000 * 1, "3g.40gb": 4500} {
		if pa := profileOf(t, rec, name); pa.RuntimeS == nil || abs(*pa.RuntimeS-want) > 1e-6 {
			t.Errorf("%s runtime %v, want %g", name, deref(pa.RuntimeS, -1), want)
		}
	}
}

func TestSUToleranceTakesTheSmallerProfile(t *testing.T) {
	// SU: 1g.10gb 3 SU/h × 1 h = 3; 2g.20gb 5 SU/h × 0.58 h = 2.9: within 5%,
	// so the smaller. Three steady runs each: the noise is below 1%.
	var runs []Run
	for i, d := range []float64{-5, 0, 5} {
		runs = append(runs, newRun("1g.10gb", 3600+d).peak(1024).id(fmt.Sprint("a", i)), newRun("2g.20gb", 2088+d).peak(1024).id(fmt.Sprint("b", i)))
	}
	if got := recommended(recommend(t, "", runs, Options{})); got != "1g.10gb" {
		t.Errorf("recommended %s, want 1g.10gb within tolerance", got)
	}
	if got := recommended(recommend(t, "", runs, Options{SUTolerance: 0.01})); got != "2g.20gb" {
		t.Errorf("with 1%% tolerance recommended %s, want 2g.20gb", got)
	}
}

func TestObjectivesAndMaxSlowdown(t *testing.T) {
	runs := []Run{newRun("1g.10gb", 4000).peak(1024), newRun("2g.20gb", 2200).peak(1024), newRun("3g.40gb", 1500).peak(1024), newRun("full", 1000).peak(1024)}
	if got := recommended(recommend(t, "", runs, Options{Objective: ObjectiveTime})); got != "full" {
		t.Errorf("objective time: %s", got)
	}
	rec := recommend(t, "", runs, Options{MaxSlowdown: 2.5})
	if got := recommended(rec); got != "2g.20gb" {
		t.Errorf("max slowdown 2.5: %s (%s)", got, rec.Reason)
	}
	if pa := profileOf(t, rec, "1g.10gb"); pa.Eligible || !strings.Contains(pa.Reason, "slower than full") {
		t.Errorf("1g.10gb at 4× full: %s", pa.Reason)
	}
	// Turnaround: a long queue for full GPUs makes the small slice sooner.
	waits := map[string]float64{"1g.10gb": 60, "2g.20gb": 600, "3g.40gb": 3600, "full": 7200}
	s := slurm.Parse("job.sh", []byte(script+"srun ./train\n"))
	rec, err := Recommend(catalogtest.Wulver(t), Job{Resources: s.Resources, Runs: runs, QueueWaitS: waits}, Options{Objective: ObjectiveTurnaround})
	if err != nil {
		t.Fatal(err)
	}
	if got := recommended(rec); got != "2g.20gb" {
		t.Errorf("turnaround: %s (%s)", got, rec.Reason)
	}
}

func TestHostOOMAdvisesMemory(t *testing.T) {
	killed := newRun("2g.20gb", 300).peak(2048)
	killed.Completed, killed.HostOOM, killed.State, killed.ReqMemMiB, killed.MaxRSSMiB = false, true, "OUT_OF_MEMORY", 4096, 4090
	rec := recommend(t, "", []Run{killed, newRun("full", 600).peak(2048)}, Options{})
	if rec.Mem != "8G" || !strings.Contains(strings.Join(rec.Notes, "\n"), "--mem=8G") {
		t.Fatalf("mem advice %q; notes %q", rec.Mem, rec.Notes)
	}
	// 8G is billed as 2 CPUs: 2 + 16 × 80/80 = 18 SU/h on full.
	if full := profileOf(t, rec, "full"); full.SUPerHour != 18 {
		t.Errorf("full SU/h %g, want 18 with --mem=8G", full.SUPerHour)
	}
	// A host OOM says nothing about GPU memory: 2g.20gb is not a GPU OOM.
	if pa := profileOf(t, rec, "2g.20gb"); pa.OOMObserved {
		t.Error("a host OOM counted as a GPU OOM")
	}
	// The script already asks for more: no advice.
	if rec := recommend(t, "#SBATCH --mem=16G\n", []Run{killed}, Options{}); rec.Mem != "" {
		t.Errorf("advice %q for a script that asks for 16G", rec.Mem)
	}
}

func TestNoHistoryUsesThePriorOrSaysWhatToRun(t *testing.T) {
	site := catalogtest.Wulver(t)
	set, _ := catalog.ReferenceFor(site)
	gmx, _ := set.Benchmark("gromacs_performance")
	s := slurm.Parse("md.sh", []byte(script+"#SBATCH --cpus-per-task=4\n#SBATCH --mem=16G\nsrun gmx mdrun -deffnm md\n"))
	rec, err := Recommend(site, Job{Script: "md.sh", Resources: s.Resources, Prior: gmx}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if recommended(rec) != "2g.20gb" || rec.Basis != BasisPrior || rec.Prior == nil || rec.Prior.Benchmark != "gromacs_performance" {
		t.Fatalf("prior: %s basis %s prior %+v", recommended(rec), rec.Basis, rec.Prior)
	}
	if notes := strings.Join(rec.Notes, "\n"); !strings.Contains(notes, "migadvisor recommend --probe md.sh") {
		t.Errorf("the prior must say how to measure for real: %q", notes)
	}
	none := recommend(t, "", nil, Options{})
	if none.Recommended != nil || none.Basis != BasisNone || none.Next != "migadvisor recommend --probe job.sh" {
		t.Errorf("no history: %s, next %q", recommended(none), none.Next)
	}
}

func TestUnknownRiskAsksForAProbeOfThatProfile(t *testing.T) {
	// A 2g.20gb run OOMed with no figure; nothing measured anywhere else.
	rec := recommend(t, "", []Run{newRun("2g.20gb", 60).oom(-1)}, Options{})
	if rec.Recommended != nil || rec.Next != "migadvisor recommend --probe --profiles 3g.40gb job.sh" {
		t.Errorf("next %q (%s)", rec.Next, rec.Reason)
	}
	if s := rec.NextStep; s.Kind != NextProbe || strings.Join(s.Profiles, ",") != "3g.40gb" || s.Script != "job.sh" {
		t.Errorf("next step %+v", s)
	}
}

// The typed next step and the command line shown agree, for each kind;
// callers act on the kind, never on the text.
func TestNextStepKindsAndTheirCommands(t *testing.T) {
	for _, c := range []struct {
		step NextStep
		want string
	}{
		{ProbeStep("job.sh", nil, ""), "migadvisor recommend --probe job.sh"},
		{ProbeStep("my job.sh", []string{"full", "full-h100"}, "02:00:00"), "migadvisor recommend --probe --profiles full,full-h100 --time 02:00:00 'my job.sh'"},
		{ProbeStep("", nil, ""), "migadvisor recommend --probe JOB.sh"},
		{LintStep("job.sh"), "migadvisor lint job.sh"},
		{NextStep{}, ""},
	} {
		var rec Recommendation
		rec.SetNext(c.step)
		if rec.Next != c.want || rec.NextStep.Kind != c.step.Kind {
			t.Errorf("%+v: next %q, want %q", c.step, rec.Next, c.want)
		}
	}
	none := recommend(t, "", nil, Options{})
	if none.NextStep.Kind != NextProbe || len(none.NextStep.Profiles) != 0 {
		t.Errorf("no history: next step %+v", none.NextStep)
	}
	done := recommend(t, "", []Run{newRun("1g.10gb", 600).peak(3000), newRun("2g.20gb", 400).peak(3000)}, Options{})
	if done.Recommended == nil || done.NextStep.Kind != NextNone || done.Next != "" {
		t.Errorf("advice that stands: %s, next step %+v %q", recommended(done), done.NextStep, done.Next)
	}
}

func TestUnexplainedFailureIsNotAdvised(t *testing.T) {
	failed := newRun("2g.20gb", 30).peak(1024)
	failed.Completed, failed.State, failed.ExitCode = false, "FAILED", 3
	rec := recommend(t, "", []Run{failed, newRun("full", 60).peak(1024)}, Options{})
	pa := profileOf(t, rec, "2g.20gb")
	if pa.Eligible || !strings.Contains(pa.Reason, "FAILED with exit code 3") {
		t.Errorf("2g.20gb after an exit 3: %v, %s", pa.Eligible, pa.Reason)
	}
	if got := recommended(rec); got != "1g.10gb" {
		t.Errorf("recommended %s (%s)", got, rec.Reason)
	}
}

// Every table of runtimes says what its predictions rest on, or why there
// are none: a prior from one run's utilization, a fit, or no time at all.
func TestRuntimesSayWhatTheyRestOn(t *testing.T) {
	rec := recommend(t, "", []Run{newRun("1g.10gb", 100).oom(12000)}, Options{})
	if !strings.HasPrefix(rec.RuntimeWhy, "no run completed") {
		t.Errorf("only an OOM: %q", rec.RuntimeWhy)
	}
	busy := newRun("full", 600).util(40)
	busy.MemUtilization = 36
	rec = recommend(t, "", []Run{busy}, Options{})
	if !strings.Contains(rec.RuntimeWhy, "busy 40% of the time on full (its memory 36%)") || !strings.Contains(rec.Model, "memory bandwidth") {
		t.Errorf("one run, memory busy most of the GPU's busy time: %q, %q", rec.RuntimeWhy, rec.Model)
	}
	rec = recommend(t, "", []Run{newRun("1g.10gb", 800), newRun("2g.20gb", 400)}, Options{})
	if !strings.HasPrefix(rec.RuntimeWhy, "bound by SMs: 2g.20gb ran 2.00× as fast as 1g.10gb") {
		t.Errorf("two runs in the ratio of the SMs: %q", rec.RuntimeWhy)
	}
}

// Runs that stop at a time do different work on each profile in the same
// 10 minutes (a GROMACS -maxh: 1.0 / 1.9 / 3.6 / 3.8 ns): each profile's SU
// per ns is its own rate's, and 3g.40gb costs least per ns (9 SU/h for 3.6
// ns against 3 SU/h for 1.0 ns on 1g.10gb, 5 SU/h for 1.9 ns on 2g.20gb:
// 5.3% dearer, beyond the 5% SU tolerance). One amount of work over each
// runtime would rank by SU per hour and pick 1g.10gb.
func TestWorkDoneInAFixedTimeIsNoConstant(t *testing.T) {
	var runs []Run
	for p, ns := range map[string]float64{"1g.10gb": 1.0, "2g.20gb": 1.9, "3g.40gb": 3.6, "full": 3.8} {
		for i := range 3 { // three runs each: a spread of 0.3%, not the 10% taken for one run
			runs = append(runs, newRun(p, 600+float64(i)).peak(2048).work(ns, "ns"))
		}
	}
	rec := recommend(t, "", runs, Options{})
	if got := recommended(rec); got != "3g.40gb" {
		t.Errorf("recommended %s: %s", got, rec.Reason)
	}
	perNS := map[string]float64{}
	for _, pa := range rec.Profiles {
		perNS[pa.Profile] = *pa.SUPerWork
	}
	// SU per ns in each profile's own terms: its SU per hour × its hours per ns.
	if r := perNS["1g.10gb"] / perNS["2g.20gb"]; r < 0.99*(3.0/1.0)/(5.0/1.9) || r > 1.01*(3.0/1.0)/(5.0/1.9) {
		t.Errorf("SU per ns %v", perNS)
	}
	if !strings.Contains(strings.Join(rec.Notes, "\n"), "the runs did different amounts of work (1 to 3.8 ns)") {
		t.Errorf("notes: %q", rec.Notes)
	}
	// The same work on every profile is the job's: the runtime on each
	// profile over it.
	var same []Run
	for p, s := range map[string]float64{"1g.10gb": 3000, "2g.20gb": 1600, "3g.40gb": 900, "full": 800} {
		same = append(same, newRun(p, s).peak(2048).work(100, "ns"))
	}
	rec = recommend(t, "", same, Options{})
	for _, n := range rec.Notes {
		if strings.Contains(n, "different amounts of work") {
			t.Errorf("the same work: %s", n)
		}
	}
}

// Two measured runs (1g.10gb 1000 s, full 400 s) admit a fixed part with SM
// scaling (2g.20gb 655 s, dearer than 1g.10gb) and a bound on the SMs (500
// s, cheaper): the untried 2g.20gb is not advised over the measured
// 1g.10gb; it is named, with the probe that tells.
func TestMeasuredBeforePredicted(t *testing.T) {
	rec := recommend(t, "", []Run{newRun("1g.10gb", 1000).peak(2048), newRun("full", 400).peak(2048)}, Options{})
	if got := recommended(rec); got != "1g.10gb" || rec.Basis != BasisMeasured {
		t.Errorf("recommended %s (%s): %s", got, rec.Basis, rec.Reason)
	}
	if !strings.Contains(rec.Reason, "2g.20gb, never run, may cost less") || rec.NextStep.Kind != NextProbe ||
		strings.Join(rec.NextStep.Profiles, ",") != "2g.20gb" {
		t.Errorf("reason %q, next %+v", rec.Reason, rec.NextStep)
	}
	// Measured on one profile, no explanation is fitted: the prediction stands.
	rec = recommend(t, "", []Run{newRun("full", 3600).peak(2048)}, Options{})
	if got := recommended(rec); got == "full" || rec.Basis != BasisPredicted {
		t.Errorf("from one profile: %s (%s): %s", got, rec.Basis, rec.Reason)
	}
}

// A script that failed for a reason of its own on every profile it ran on
// is not probed again: the reason says it fails whatever the profile, with
// the newest run's first error line; once a later run completed, the old
// failures are not repeated in the notes.
func TestAScriptThatFailsEverywhere(t *testing.T) {
	at := time.Date(2026, 11, 20, 1, 0, 0, 0, time.UTC)
	fail := func(p string, minutes int, text string) Run {
		r := newRun(p, 5)
		r.Completed, r.State, r.ExitCode, r.JobID = false, "FAILED", 1, fmt.Sprint(100+minutes)
		r.Submitted, r.Outcome = at.Add(time.Duration(minutes)*time.Minute), outcome.Outcome{Kind: outcome.Failed, Text: text}
		return r
	}
	runs := []Run{fail("1g.10gb", 0, "failed with exit code 1; err-100.txt line 3: ModuleNotFoundError: No module named 'x'"),
		fail("full", 1, "failed with exit code 1; err-101.txt line 3: ModuleNotFoundError: No module named 'x'")}
	rec := recommend(t, "", runs, Options{})
	if rec.Recommended != nil || rec.NextStep.Kind != NextNone ||
		rec.Reason != "the script fails whatever the profile: it failed on 1g.10gb and full, and no run completed; job 101 failed with exit code 1; err-101.txt line 3: ModuleNotFoundError: No module named 'x'; fix the script before measuring it" {
		t.Errorf("reason %q, next %+v", rec.Reason, rec.NextStep)
	}
	for _, n := range rec.Notes {
		if strings.Contains(n, "failed") {
			t.Errorf("a note repeats the reason: %s", n)
		}
	}
	// On one profile only, the profile may be the cause: measured elsewhere.
	if rec = recommend(t, "", runs[:1], Options{}); strings.Contains(rec.Reason, "whatever the profile") {
		t.Errorf("one profile: %s", rec.Reason)
	}
	// Fixed: a completed run after the failures; they are history, not notes.
	done := newRun("1g.10gb", 60).peak(1024)
	done.Submitted = at.Add(time.Hour)
	rec = recommend(t, "", append(runs, done), Options{})
	for _, n := range rec.Notes {
		if strings.Contains(n, "job 10") {
			t.Errorf("an old failure is repeated after a success: %s", n)
		}
	}
	// A failure after the success is news.
	late := fail("2g.20gb", 120, "failed with exit code 1")
	rec = recommend(t, "", append(runs, done, late), Options{})
	if !strings.Contains(strings.Join(rec.Notes, "\n"), "job 220 on 2g.20gb failed") {
		t.Errorf("a failure after the success is not said: %q", rec.Notes)
	}
}

// A profile the site's SU formula cannot price is said so (its unpriced
// reason and a note) and never recommended: with no figure its SU would
// read as 0, the cheapest of all.
func TestAProfileThatCannotBePricedIsSaidAndNotRecommended(t *testing.T) {
	charge := chargeJob
	t.Cleanup(func() { chargeJob = charge })
	chargeJob = func(s *catalog.Site, j catalog.Job) (catalog.Charge, error) {
		if j.Profile != nil && j.Profile.Name == "1g.10gb" {
			return catalog.Charge{}, fmt.Errorf("no rate for %s", j.Profile.Name)
		}
		return charge(s, j)
	}
	rec := recommend(t, "", []Run{newRun("full", 3600).peak(3072)}, Options{})
	small := profileOf(t, rec, "1g.10gb")
	if small.Eligible || small.Unpriced != "no price: the site's SU formula failed on 1g.10gb: no rate for 1g.10gb" || small.Reason != small.Unpriced {
		t.Errorf("1g.10gb: eligible %v, unpriced %q, reason %q", small.Eligible, small.Unpriced, small.Reason)
	}
	if got := recommended(rec); got != "2g.20gb" {
		t.Errorf("recommended %s, want 2g.20gb, the smallest priced: %s", got, rec.Reason)
	}
	var text strings.Builder
	rec.WriteText(&text)
	if want := "note: 1g.10gb has no price (the site's SU formula failed: no rate for 1g.10gb), so it is not recommended\n"; strings.Count(text.String(), want) != 1 {
		t.Errorf("the advice does not say it once:\n%s", text.String())
	}
}
