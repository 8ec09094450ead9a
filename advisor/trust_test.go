package advisor

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

func (r Run) util(u float64) Run { r.Utilization = u; return r }
func (r Run) earlier() Run       { r.Earlier = true; return r }
func (r Run) id(id string) Run   { r.JobID = id; return r }

func TestATimedOutProfileIsNeverChosenOnAPrediction(t *testing.T) {
	// A job the GPU hardly limits (utilization 10%): full took 5 minutes, so
	// the model predicts 1g.10gb under its 10 minutes, but 1g.10gb ran past a
	// 10-minute limit. Its runtime is unknown beyond that bound.
	runs := []Run{newRun("full", 300).peak(1024).util(10), newRun("1g.10gb", 600).peak(1024).util(10).timeout()}
	rec := recommend(t, "#SBATCH --time=10:00\n", runs, Options{})
	small := profileOf(t, rec, "1g.10gb")
	if small.Eligible || recommended(rec) == "1g.10gb" {
		t.Fatalf("1g.10gb chosen on a prediction below its timeout: %s", rec.Reason)
	}
	if !small.RuntimeAtLeast || small.RuntimeS == nil || *small.RuntimeS < 600 || !strings.Contains(small.Reason, "time limit") {
		t.Errorf("1g.10gb: at least %v %v; %s", small.RuntimeAtLeast, small.RuntimeS, small.Reason)
	}
}

func TestABoundOnABiggerProfileBoundsTheSmallerOnes(t *testing.T) {
	// 2g.20gb ran past an hour; full completed in 20 minutes. Whatever the
	// model says, 1g.10gb (half of 2g.20gb) cannot be faster than an hour.
	runs := []Run{newRun("full", 1200).peak(1024).util(10), newRun("2g.20gb", 3600).peak(1024).util(10).timeout()}
	rec := recommend(t, "#SBATCH --time=1:00:00\n", runs, Options{})
	small := profileOf(t, rec, "1g.10gb")
	if small.RuntimeS == nil || *small.RuntimeS < 3600 || !small.RuntimeAtLeast || small.Eligible {
		t.Fatalf("1g.10gb: %v at least %v, eligible %v (%s)", small.RuntimeS, small.RuntimeAtLeast, small.Eligible, small.Reason)
	}
	if got := recommended(rec); got != "3g.40gb" && got != "full" {
		t.Errorf("recommended %s: %s", got, rec.Reason)
	}
}

func TestDifferencesWithinNoiseAreTiesThatGoToTheSmallerProfile(t *testing.T) {
	// One run each: 1g.10gb 3 SU/h × 1000 s = 0.83 SU; 2g.20gb 5 SU/h × 560 s
	// = 0.78 SU, 7% less: within the 10% taken as noise when runs are few.
	one := []Run{newRun("1g.10gb", 1000).peak(1024), newRun("2g.20gb", 560).peak(1024)}
	rec := recommend(t, "", one, Options{})
	if got := recommended(rec); got != "1g.10gb" {
		t.Fatalf("one run each: recommended %s: %s", got, rec.Reason)
	}
	if !strings.Contains(rec.Reason, "noise") {
		t.Errorf("the reason does not say it is a tie: %s", rec.Reason)
	}
	// Three steady runs each (spread 1%): the 7% is real, and 2g.20gb wins.
	var three []Run
	for i, d := range []float64{0, 5, 10} {
		three = append(three, newRun("1g.10gb", 1000+d).peak(1024).id("a"+string(rune('0'+i))),
			newRun("2g.20gb", 560+d/2).peak(1024).id("b"+string(rune('0'+i))))
	}
	rec = recommend(t, "", three, Options{})
	if got := recommended(rec); got != "2g.20gb" {
		t.Fatalf("three steady runs each: recommended %s: %s", got, rec.Reason)
	}
	small := profileOf(t, rec, "1g.10gb")
	if small.RuntimeRuns != 3 || small.RuntimeSpread == nil || math.Abs(*small.RuntimeSpread-0.01) > 0.001 {
		t.Errorf("1g.10gb confidence: %d runs, spread %v", small.RuntimeRuns, small.RuntimeSpread)
	}
	// A noisy job (runs 40% apart) makes the same difference a tie again.
	noisy := append([]Run{}, three...)
	noisy = append(noisy, newRun("2g.20gb", 800).peak(1024).id("b9"), newRun("2g.20gb", 500).peak(1024).id("b8"))
	if got := recommended(recommend(t, "", noisy, Options{})); got != "1g.10gb" {
		t.Errorf("noisy runs: recommended %s", got)
	}
}

func TestMultiGPUScriptIsNotAdvisedAsOneSlice(t *testing.T) {
	rec := recommend(t, "#SBATCH --gres=gpu:a100:2\n", nil, Options{})
	for _, pa := range rec.Profiles {
		p, _ := catalogtest.Wulver(t).Profile(pa.Profile)
		if p.IsMIG() && (pa.Eligible || !strings.Contains(pa.Reason, "MIG")) {
			t.Errorf("%s for a 2-GPU job: eligible %v, %s", pa.Profile, pa.Eligible, pa.Reason)
		}
	}
	notes := strings.Join(rec.Notes, "\n")
	if !strings.Contains(notes, "2 GPUs") || !strings.Contains(notes, "peer-to-peer") || rec.MultiGPU == nil || rec.MultiGPU.GPUs != 2 {
		t.Errorf("notes %q, multi %+v", notes, rec.MultiGPU)
	}
	if rec.Next != "" && strings.Contains(rec.Next, "--probe") && !strings.Contains(rec.Next, "--profiles full") {
		t.Errorf("next %q would probe slices", rec.Next)
	}
}

func TestSUPerWorkIsInAUnitPeopleRead(t *testing.T) {
	// 3 SU/h for 1000 s over 8M samples: 1.04e-07 SU per sample, 0.104 per 1M.
	rec := recommend(t, "", []Run{newRun("1g.10gb", 1000).peak(1024).work(8e6, "samples")}, Options{})
	small := profileOf(t, rec, "1g.10gb")
	if small.WorkUnit != "1M samples" || small.SUPerWork == nil || *small.SUPerWork != 0.104 {
		t.Fatalf("SU per work: %v per %q", small.SUPerWork, small.WorkUnit)
	}
	if strings.Contains(rec.Reason, "e-0") {
		t.Errorf("reason with an exponent: %s", rec.Reason)
	}
}

func TestFiguresAreRoundedAlike(t *testing.T) {
	rec := recommend(t, "", []Run{newRun("1g.10gb", 3.149949263241184).peak(1024)}, Options{})
	small := profileOf(t, rec, "1g.10gb")
	if *small.RuntimeS != 3 || small.RuntimeRangeS[0] != 3 || *small.SU != 0.0025 {
		t.Errorf("runtime %v %v, SU %v", *small.RuntimeS, *small.RuntimeRangeS, *small.SU)
	}
	// The reason prints the figure the JSON holds.
	if !strings.Contains(rec.Reason, catalog.FormatSU(*small.SU)) {
		t.Errorf("reason %q lacks %s", rec.Reason, catalog.FormatSU(*small.SU))
	}
}

func TestTheChangeToMakeAndWhatItSaves(t *testing.T) {
	site := catalogtest.Wulver(t)
	src := "#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --cpus-per-task=1\n#SBATCH --mem=4G\n#SBATCH --time=30\npython train.py\n"
	s := slurm.Parse("job.sh", []byte(src))
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	var runs []Run
	for i := range 4 { // four runs of 40 minutes on full this month: 2.8 GiB each
		r := newRun("full", 2400).peak(2867).id(string(rune('a' + i)))
		r.Submitted = now.Add(-time.Duration(i) * 72 * time.Hour)
		runs = append(runs, r)
	}
	old := newRun("full", 2400).peak(2867).id("old")
	old.Submitted = now.Add(-60 * 24 * time.Hour)
	runs = append(runs, old)
	rec, err := Recommend(site, Job{Script: "job.sh", Source: s, Resources: s.Resources, Runs: runs, Now: now}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if recommended(rec) != "1g.10gb" {
		t.Fatalf("recommended %s: %s", recommended(rec), rec.Reason)
	}
	ch := rec.Change
	if ch == nil || len(ch.Lines) == 0 || ch.Lines[0].Line != 3 || ch.Lines[0].New != "#SBATCH --gres=gpu:a100_10g:1" {
		t.Fatalf("change %+v", ch)
	}
	// The slice is predicted slower than 30 minutes: the --time line changes too.
	var timeLine bool
	for _, l := range ch.Lines {
		timeLine = timeLine || l.Line == 6 && strings.HasPrefix(l.New, "#SBATCH --time=")
	}
	if !timeLine {
		t.Errorf("no --time change in %+v", ch.Lines)
	}
	// Full: 17 SU/h × 40 min = 11.3 SU a run; saved per run is that less the slice's.
	slice := profileOf(t, rec, "1g.10gb")
	if ch.SUPerRun == nil || math.Abs(*ch.SUPerRun-(11.3-*slice.SU)) > 0.02 || ch.RunsPerMonth != 4 ||
		ch.SUPerMonth == nil || math.Abs(*ch.SUPerMonth-4**ch.SUPerRun) > 0.05 {
		t.Errorf("savings %+v (slice %v SU)", ch, *slice.SU)
	}
	if ch.Asks != "full" {
		t.Errorf("asks %q", ch.Asks)
	}
}

func TestEarlierVersionsWidenTheMemoryMargin(t *testing.T) {
	// 7 GiB on full is 74% of 1g.10gb's 9.5 GiB: low for this script, not
	// for an earlier version of it (a quarter more margin: 92%).
	exact := recommend(t, "", []Run{newRun("full", 600).peak(7168)}, Options{})
	if pa := profileOf(t, exact, "1g.10gb"); pa.OOMRisk != memory.RiskLow {
		t.Fatalf("exact: %s (%s)", pa.OOMRisk, pa.OOMRiskReason)
	}
	earlier := recommend(t, "", []Run{newRun("full", 600).peak(7168).earlier()}, Options{})
	pa := profileOf(t, earlier, "1g.10gb")
	if pa.OOMRisk == memory.RiskLow || !strings.Contains(pa.OOMRiskReason, "earlier version") {
		t.Errorf("earlier: %s (%s)", pa.OOMRisk, pa.OOMRiskReason)
	}
	// A completion there in an earlier version is not proof for this one.
	done := recommend(t, "", []Run{newRun("1g.10gb", 600).peak(9400).earlier()}, Options{})
	if pa := profileOf(t, done, "1g.10gb"); pa.OOMRisk == memory.RiskLow {
		t.Errorf("earlier completion at 99%%: %s (%s)", pa.OOMRisk, pa.OOMRiskReason)
	}
}

var _ = catalog.Builtin

func TestAMultiGPUScriptsOwnRunsCount(t *testing.T) {
	two := func(r Run) Run { r.GPUs = 2; return r }
	runs := []Run{two(newRun("full", 600).peak(5000).id("900001")), two(newRun("full", 620).peak(5000).id("900002")),
		newRun("full", 1000).peak(5000).id("1gpu")}
	rec := recommend(t, "#SBATCH --gres=gpu:a100:2\n", runs, Options{})
	full := profileOf(t, rec, "full")
	if rec.Runs != 2 || recommended(rec) != "full" || full.Runs != 2 || *full.RuntimeS != 610 || full.SUPerHour != 33 {
		t.Fatalf("2-GPU job: %d runs, recommended %s, full %+v", rec.Runs, recommended(rec), full)
	}
	if !strings.Contains(strings.Join(rec.Notes, "\n"), "1 run on another number of GPUs than this job's 2 left out") {
		t.Errorf("notes %q", rec.Notes)
	}
}

func TestThisVersionsRunsOutweighAnEarlierVersions(t *testing.T) {
	// Seen: after an edit and two runs of the new version, the need still
	// came from the earlier version's runs, plus the margin.
	runs := []Run{newRun("full", 600).peak(2867).earlier().id("o1"), newRun("full", 600).peak(2867).earlier().id("o2"),
		newRun("full", 600).peak(2867).id("n1")}
	rec := recommend(t, "", runs, Options{})
	if rec.Runs != 1 || rec.EarlierRuns != 0 || rec.GPUMemNeed == nil || rec.GPUMemNeed.Earlier || rec.GPUMemNeed.MiB != 2867 {
		t.Errorf("runs %d (earlier %d), need %+v", rec.Runs, rec.EarlierRuns, rec.GPUMemNeed)
	}
	if !strings.Contains(strings.Join(rec.Notes, "\n"), "2 runs of an earlier version left out") {
		t.Errorf("notes %q", rec.Notes)
	}
	// A run cancelled before it started says nothing: the earlier ones stay.
	cancelled := newRun("full", 0).id("c")
	cancelled.Completed, cancelled.State = false, "CANCELLED"
	rec = recommend(t, "", []Run{runs[0], runs[1], cancelled}, Options{})
	if rec.EarlierRuns != 2 {
		t.Errorf("with a cancelled run of this version: %d earlier runs", rec.EarlierRuns)
	}
}

func TestTheNeedNamesTheRunsItsFigureComesFrom(t *testing.T) {
	// Seen: "the OOM lower bound on 1g.10gb in 2 runs" for one OOM run.
	runs := append(runsOn("1g.10gb", 1, 60, 0, true), newRun("3g.40gb", 600).peak(8000), newRun("full", 500).peak(8000))
	rec := recommend(t, "", runs, Options{})
	if r := profileOf(t, rec, "2g.20gb").OOMRiskReason; !strings.HasSuffix(r, "the OOM lower bound on 1g.10gb in 1 run") {
		t.Errorf("2g.20gb: %q", r)
	}
}

func TestACrashedRunGivesNoWorkRate(t *testing.T) {
	killed := newRun("1g.10gb", 30).work(1e6, "samples")
	killed.Completed, killed.HostOOM, killed.State = false, true, "OUT_OF_MEMORY"
	rec := recommend(t, "", []Run{killed}, Options{})
	for _, pa := range rec.Profiles {
		if pa.SUPerWork != nil && pa.RuntimeS == nil {
			t.Errorf("%s: SU per work %v without a runtime", pa.Profile, *pa.SUPerWork)
		}
	}
}

func TestTheMonthlyRateIsTheUsersOwn(t *testing.T) {
	site := catalogtest.Wulver(t)
	s := slurm.Parse("job.sh", []byte("#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH -c 1\n#SBATCH --mem=4G\nrun\n"))
	now := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	var runs []Run
	for i, u := range []string{"alice", "bob", "bob", "bob"} {
		r := newRun("full", 3600).peak(2048).id(fmt.Sprint(i))
		r.User, r.Submitted = u, now.Add(-time.Duration(i)*time.Hour)
		runs = append(runs, r)
	}
	// alice's probe of the script on the four profiles: measurements, not her rate.
	for i, p := range []string{"1g.10gb", "2g.20gb", "3g.40gb", "full"} {
		r := newRun(p, 4000).peak(2048).id(fmt.Sprint("p", i))
		r.User, r.Submitted, r.Swept = "alice", now.Add(-time.Minute), true
		runs = append(runs, r)
	}
	rec, err := Recommend(site, Job{Script: "job.sh", Source: s, Resources: s.Resources, Runs: runs, User: "alice"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Change == nil || rec.Change.RunsPerMonth != 1 {
		t.Errorf("alice's rate: %+v", rec.Change)
	}
	probeOnly := slices.DeleteFunc(slices.Clone(runs), func(r Run) bool { return !r.Swept })
	rec, err = Recommend(site, Job{Script: "job.sh", Source: s, Resources: s.Resources, Runs: probeOnly, User: "alice"}, Options{})
	if err != nil || rec.Change == nil || rec.Change.RunsPerMonth != 0 || rec.Change.SUPerMonth != nil {
		t.Errorf("a probe alone gives no monthly rate: %+v %v", rec.Change, err)
	}
}

func TestATieWithTheProfileAskedForSaysSo(t *testing.T) {
	// Seen: "it costs about 0.028 SU a run more than 2g.20gb, which is not
	// safe for this job" for a 2g.20gb that completed twice.
	site := catalogtest.Wulver(t)
	s := slurm.Parse("tie.sh", []byte("#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100_20g:1\n#SBATCH -c 1\n#SBATCH --mem=4G\nrun\n"))
	runs := []Run{newRun("1g.10gb", 600).peak(1024).id("a"), newRun("1g.10gb", 610).peak(1024).id("b"),
		newRun("2g.20gb", 340).peak(1024).id("c"), newRun("2g.20gb", 345).peak(1024).id("d")}
	rec, err := Recommend(site, Job{Script: "tie.sh", Source: s, Resources: s.Resources, Runs: runs}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ch := rec.Change
	if recommended(rec) != "1g.10gb" || ch == nil || ch.SUPerRun == nil || *ch.SUPerRun >= 0 || !strings.Contains(ch.Because, "tie") {
		t.Fatalf("recommended %s, change %+v", recommended(rec), ch)
	}
	if strings.Contains(rec.Reason, "figure of") || !strings.Contains(rec.Reason, "a tie with 2g.20gb's") {
		t.Errorf("reason %q", rec.Reason)
	}
}

func TestSUPerWorkFollowsTheRuntimeAndItsBound(t *testing.T) {
	// Seen: "≥8.03" SU beside 4.04 SU per 1M tokens for runs of 1M tokens.
	runs := []Run{newRun("full", 600).peak(2048).work(1e6, "tokens").util(10),
		newRun("1g.10gb", 7200).peak(2048).work(5e5, "tokens").util(10).timeout()}
	rec := recommend(t, "#SBATCH --time=2:00:00\n", runs, Options{})
	for _, pa := range rec.Profiles {
		if pa.SU == nil || pa.SUPerWork == nil || pa.WorkUnit != "1M tokens" {
			t.Fatalf("%s: SU %v, per work %v %q", pa.Profile, pa.SU, pa.SUPerWork, pa.WorkUnit)
		}
		// One run is 1M tokens: the two figures are the same, to rounding.
		if math.Abs(*pa.SU-*pa.SUPerWork) > 0.01**pa.SU {
			t.Errorf("%s: %v SU but %v SU per 1M tokens", pa.Profile, *pa.SU, *pa.SUPerWork)
		}
	}
}

func TestAMultiGPUJobsSlicesHaveNoFigures(t *testing.T) {
	rec := recommend(t, "#SBATCH --gres=gpu:a100:2\n", []Run{newRun("full", 600).peak(2048)}, Options{})
	for _, pa := range rec.Profiles {
		p, _ := catalogtest.Wulver(t).Profile(pa.Profile)
		if p.IsMIG() && (pa.OOMRisk != memory.RiskNone || pa.RuntimeS != nil || pa.SU != nil) {
			t.Errorf("%s: risk %s, runtime %v, SU %v", pa.Profile, pa.OOMRisk, pa.RuntimeS, pa.SU)
		}
	}
}

func TestASmallerProfileWithNoMemoryFigureIsWorthAProbe(t *testing.T) {
	// Seen: one completed run on full, no monitor: "nothing to change", and no next step.
	rec := recommend(t, "", []Run{newRun("full", 600)}, Options{})
	if recommended(rec) != "full" || rec.Next != "migadvisor recommend --probe --profiles 1g.10gb job.sh" ||
		rec.NextStep.Kind != NextProbe || strings.Join(rec.NextStep.Profiles, ",") != "1g.10gb" {
		t.Errorf("recommended %s, next %q %+v", recommended(rec), rec.Next, rec.NextStep)
	}
}

// Seen: full completed twice in about 10 minutes, 1g.10gb ran past its one
// hour limit. 1g.10gb's bound already costs more than full: no probe of it
// is suggested; and 2g.20gb, which no limit bounds, is predicted by a model
// that meets the 1g.10gb bound (the prior's fixed share predicted 16
// minutes, which that bound rules out).
func TestABoundMakesTheModelAndTheNextStepAgree(t *testing.T) {
	runs := []Run{newRun("full", 600).id("1"), newRun("full", 620).id("2"), newRun("1g.10gb", 3630).id("3").timeout()}
	rec := recommend(t, "#SBATCH --time=1:00:00\n", runs, Options{})
	if got := recommended(rec); got != "full" {
		t.Fatalf("recommended %s: %s", got, rec.Reason)
	}
	if strings.Contains(rec.Next, "--profiles 1g.10gb") {
		t.Errorf("next probes 1g.10gb, which its bound already prices above full: %s", rec.Next)
	}
	// Under the model, 1g.10gb at its bound means at most a fixed share f
	// with 610 × (f + (1−f)/c1) ≥ 3630; 2g.20gb is then at least
	// 610 × (f + (1−f)/c2).
	site := catalogtest.Wulver(t)
	c := func(name string) float64 { p, _ := site.Profile(name); return site.Shares(p).SM } // the prior scales with SMs
	f := 0.0
	for g := 0.0; g <= 1; g += 0.001 {
		if 610*(g+(1-g)/c("1g.10gb")) >= 3630 {
			f = g
		}
	}
	floor := 610 * (f + (1-f)/c("2g.20gb"))
	mid := profileOf(t, rec, "2g.20gb")
	if mid.RuntimeS == nil {
		t.Fatal("2g.20gb has no runtime")
	}
	if *mid.RuntimeS < floor*0.98 || mid.RuntimeAtLeast {
		t.Errorf("2g.20gb predicted %.0f s, want at least %.0f s (fixed share ≤ %.3f); model %s", *mid.RuntimeS, floor, f, rec.Model)
	}
	if !strings.Contains(rec.Model, "to meet the time limit reached on 1g.10gb") {
		t.Errorf("the model does not say the bound shaped it: %s", rec.Model)
	}
}

// Seen: "lowest SU per 1B samples: 69.4, then 69.4 on 2g.20gb". When the
// best profile is also the smallest of a tie, the reason says it is a tie.
func TestABestThatTiesSaysSo(t *testing.T) {
	rec := recommend(t, "", []Run{newRun("1g.10gb", 1000).peak(1024), newRun("2g.20gb", 600).peak(1024)}, Options{})
	if got := recommended(rec); got != "1g.10gb" {
		t.Fatalf("recommended %s: %s", got, rec.Reason)
	}
	if !strings.Contains(rec.Reason, ", a tie with 2g.20gb's") || strings.Contains(rec.Reason, "then") {
		t.Errorf("reason: %s", rec.Reason)
	}
	// Far apart: the runner-up is named as before.
	rec = recommend(t, "", []Run{newRun("1g.10gb", 1000).peak(1024), newRun("2g.20gb", 900).peak(1024)}, Options{})
	if !strings.Contains(rec.Reason, ", then ") || strings.Contains(rec.Reason, "tie") {
		t.Errorf("reason: %s", rec.Reason)
	}
}

// Seen: on 1g.10gb one run timed out after 68 s and one completed in 4 s;
// recommend --objective time picked 1g.10gb on "00:00:04 (1 run)". The
// timeout counts at the time it ran, a lower bound: the median of the two
// is at least 36 s, and a median that rests on a bound chooses nothing.
func TestATimeoutBesideACompletionBoundsTheMedian(t *testing.T) {
	runs := []Run{newRun("1g.10gb", 4).peak(1024).id("236"), newRun("1g.10gb", 68).peak(1024).id("194").timeout(),
		newRun("full", 11).peak(1024).id("300")}
	rec := recommend(t, "#SBATCH --time=1\n", runs, Options{Objective: ObjectiveTime})
	small := profileOf(t, rec, "1g.10gb")
	if small.RuntimeS == nil || *small.RuntimeS != 36 || !small.RuntimeAtLeast || small.RuntimeRuns != 2 || small.Eligible {
		t.Fatalf("1g.10gb: runtime %v, at least %v, %d runs, eligible %v (%s)", small.RuntimeS, small.RuntimeAtLeast, small.RuntimeRuns, small.Eligible, small.Reason)
	}
	if want := "it ran past its time limit here after 00:01:08 in 1 run of its 2 runs, so the median runtime here is at least 00:00:36"; !strings.HasPrefix(small.Reason, want) {
		t.Errorf("reason %q, want it to start %q", small.Reason, want)
	}
	if got := recommended(rec); got != "full" {
		t.Errorf("recommended %s: %s", got, rec.Reason)
	}
	// Two completions and a timeout below their median: the median stands.
	runs = append(runs, newRun("1g.10gb", 80).peak(1024).id("237"), newRun("1g.10gb", 90).peak(1024).id("238"))
	rec = recommend(t, "#SBATCH --time=5\n", runs, Options{})
	if small := profileOf(t, rec, "1g.10gb"); small.RuntimeAtLeast || small.RuntimeS == nil || *small.RuntimeS != 74 {
		t.Errorf("with 3 completions: runtime %v, at least %v", small.RuntimeS, small.RuntimeAtLeast)
	}
}

// Seen: "saves about 0.0025 SU a run against 3g.40gb" for two profiles
// within the noise of each other: the saving is said as a tie.
func TestASavingWithinTheNoiseIsSaidAsATie(t *testing.T) {
	site := catalogtest.Wulver(t)
	s := slurm.Parse("tie.sh", []byte("#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100_20g:1\n#SBATCH -c 1\n#SBATCH --mem=4G\nrun\n"))
	runs := []Run{newRun("1g.10gb", 1000).peak(1024).id("a"), newRun("2g.20gb", 620).peak(1024).id("b")}
	rec, err := Recommend(site, Job{Script: "tie.sh", Source: s, Resources: s.Resources, Runs: runs}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ch := rec.Change
	if recommended(rec) != "1g.10gb" || ch == nil || ch.SUPerRun == nil || *ch.SUPerRun <= 0 || !strings.Contains(ch.Because, "within the run-to-run noise") {
		t.Fatalf("recommended %s, change %+v", recommended(rec), ch)
	}
	// A clear saving is not called a tie.
	runs[1] = newRun("2g.20gb", 900).peak(1024).id("b")
	if rec, _ = Recommend(site, Job{Script: "tie.sh", Source: s, Resources: s.Resources, Runs: runs}, Options{}); rec.Change == nil || rec.Change.Because != "" {
		t.Errorf("a clear saving: %+v", rec.Change)
	}
}

// A script whose every run ran to one time limit (a search given four
// hours, or a job that needs longer than it asks) did a run's work in that
// time: the whole GPU's runtime is that work's, not a lower bound, and a
// slice is judged by the SU of the same work there. Runs that reached
// different limits, or a single one, stay lower bounds.
func TestRunsThatAllReachOneTimeLimitAreJudgedPerUnitOfWork(t *testing.T) {
	budget := []Run{newRun("full", 14407).peak(3072).util(25).timeout().id("1"), newRun("full", 14405).peak(3072).util(25).timeout().id("2"),
		newRun("full", 14410).peak(3072).util(25).timeout().id("3")}
	rec := recommend(t, "#SBATCH --time=4:00:00\n", budget, Options{})
	full := profileOf(t, rec, "full")
	if rec.TimeBudgetS != 14410 || full.RuntimeAtLeast || full.RuntimeS == nil || *full.RuntimeS != 14407 || full.TimeLimit != "" {
		t.Fatalf("budget %v; full: %v at least %v, --time %q", rec.TimeBudgetS, full.RuntimeS, full.RuntimeAtLeast, full.TimeLimit)
	}
	got := recommended(rec)
	there := profileOf(t, rec, got)
	if got == "full" || got == "" || there.RuntimeS == nil || *there.RuntimeS <= 14407 || there.RuntimeAtLeast || there.TimeLimit == "" {
		t.Fatalf("recommended %q (%+v): %s", got, there, rec.Reason)
	}
	if *there.SU >= *full.SU {
		t.Errorf("%s costs %v SU for the work full does for %v", got, *there.SU, *full.SU)
	}
	if !slices.ContainsFunc(rec.Notes, func(n string) bool { return strings.Contains(n, "SU per unit of work") }) {
		t.Errorf("no note says the runtimes are per run's work: %q", rec.Notes)
	}
	for name, runs := range map[string][]Run{
		"one run":        budget[:1],
		"two limits":     {budget[0], newRun("full", 7207).peak(3072).util(25).timeout().id("4")},
		"one completion": append([]Run{newRun("full", 9000).peak(3072).util(25).id("5")}, budget...),
	} {
		rec := recommend(t, "#SBATCH --time=4:00:00\n", runs, Options{})
		if rec.TimeBudgetS != 0 {
			t.Errorf("%s: read as a time budget of %v", name, rec.TimeBudgetS)
		}
	}
}

func TestAPredictedTieDoesNotMoveTheScriptOffWhatItAsks(t *testing.T) {
	// Seen: "recommend 1g.10gb: 12.6 SU, a tie with 2g.20gb's 11.5" for a
	// script that asks for 2g.20gb, with --time raised from 04:00:00 to
	// 09:20:00: a change predicted to cost more, on no run's evidence.
	site := catalogtest.Wulver(t)
	s := slurm.Parse("c3.sh", []byte("#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100_20g:1\n#SBATCH -c 3\n#SBATCH --mem=12G\n#SBATCH --time=04:00:00\n./solver\n"))
	runs := []Run{newRun("full", 3600).peak(2048).id("a"), newRun("full", 3700).peak(2048).id("b"), newRun("full", 3500).peak(2048).id("c")}
	rec, err := Recommend(site, Job{Script: "c3.sh", Source: s, Resources: s.Resources, Runs: runs}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	one, two := profileOf(t, rec, "1g.10gb"), profileOf(t, rec, "2g.20gb")
	if one.SU == nil || two.SU == nil || *one.SU <= *two.SU || *one.SU > *two.SU*1.1 {
		t.Fatalf("the case needs 1g.10gb predicted dearer than 2g.20gb within the noise: %v against %v", one.SU, two.SU)
	}
	if recommended(rec) != "2g.20gb" || rec.Change == nil || len(rec.Change.Lines) != 0 {
		t.Fatalf("recommended %s, change %+v; reason %q", recommended(rec), rec.Change, rec.Reason)
	}
	if strings.Contains(rec.Reason, "a tie goes to the smaller profile") {
		t.Errorf("reason %q", rec.Reason)
	}
}

func TestAScriptsTimeBeyondThePartitionDoesNotHideThePartitionsLimit(t *testing.T) {
	// Seen: with --time=5-00:00:00 (the partition allows 3 days), 3g.40gb
	// was advised on a runtime range reaching 4 days, and the change kept
	// the --time sbatch refuses.
	var runs []Run
	for i, sec := range []float64{40 * 3600, 41 * 3600, 39 * 3600} {
		runs = append(runs, newRun("full", sec).peak(2048).id(fmt.Sprint(i)))
	}
	rec := recommend(t, "#SBATCH --time=5-00:00:00\n", runs, Options{})
	const max = 3 * 24 * 3600.0
	for _, pa := range rec.Profiles {
		if pa.RuntimeRangeS != nil && pa.RuntimeRangeS[1] > max && pa.TimeLimitNote() == "" {
			t.Errorf("%s: range to %.0f s past the partition's limit, without a word", pa.Profile, pa.RuntimeRangeS[1])
		}
		if pa.Eligible && pa.TimeLimit == "" {
			t.Errorf("%s: eligible with the script's 5 days, which sbatch refuses", pa.Profile)
		}
	}
	if recommended(rec) == "" || rec.TimeLimit == "" {
		t.Fatalf("recommended %q with --time %q", recommended(rec), rec.TimeLimit)
	}
	if d, err := slurm.ParseTimeLimit(rec.TimeLimit); err != nil || d.Duration.Seconds() > max {
		t.Errorf("--time %s: %v", rec.TimeLimit, err)
	}
}

func TestTheProbeOfAnUnsureProfileAsksForTheTimeItNeeds(t *testing.T) {
	// Seen: after a run reached its 1-minute limit on full at 79 s, "next:
	// migadvisor recommend --probe --profiles 1g.10gb timeout.sh": a probe
	// at the script's --time, certain to reach it again.
	rec := recommend(t, "#SBATCH --time=1\n", []Run{newRun("full", 79).timeout().id("6")}, Options{})
	step := rec.NextStep
	if step.Kind != NextProbe || len(step.Profiles) != 1 {
		t.Fatalf("next %q (step %+v); reason %q", rec.Next, step, rec.Reason)
	}
	pa := profileOf(t, rec, step.Profiles[0])
	limit, err := slurm.ParseTimeLimit(step.Time)
	if err != nil || step.Time != pa.TimeLimit || limit.Duration.Seconds() < 79 {
		t.Errorf("the probe of %s asks for --time %q, where a run there needs %q, more than the 79 s the run reached", pa.Profile, step.Time, pa.TimeLimit)
	}
}

func TestANeverRunTieDoesNotHideASmallerMeasuredOne(t *testing.T) {
	// Seen in review: asked for 3g.40gb (measured, 10.0 SU), 2g.20gb
	// measured at 10.3, 1g.10gb only predicted at 10.5: the never-run
	// 1g.10gb kept the script on 3g.40gb, and the reason called the
	// measured 2g.20gb never run.
	site := catalogtest.Wulver(t)
	asked, _ := site.Profile("3g.40gb")
	su := func(v float64) *float64 { return &v }
	profiles := []ProfileAdvice{
		{Profile: "1g.10gb", UsableMiB: 9728, SU: su(10.5), RuntimeSource: BasisPredicted},
		{Profile: "2g.20gb", UsableMiB: 19968, SU: su(10.3), RuntimeSource: BasisMeasured},
		{Profile: "3g.40gb", UsableMiB: 40448, SU: su(10.0), RuntimeSource: BasisMeasured},
	}
	d := deciding{site: site, ev: &evidence{base: catalog.Job{Profile: asked}}, opt: Options{}.withDefaults(site), profiles: profiles}
	eligible := []*ProfileAdvice{&d.profiles[0], &d.profiles[1], &d.profiles[2]}
	obj, _ := d.objectiveOf(eligible)
	if choice, _, _, _ := d.pick(eligible, obj); choice.Profile != "2g.20gb" {
		t.Errorf("picked %s, want the measured 2g.20gb that ties", choice.Profile)
	}
	// Without the measured tie, the never-run one leaves the script as it asks.
	if choice, _, _, _ := d.pick([]*ProfileAdvice{eligible[0], eligible[2]}, obj); choice.Profile != "3g.40gb" {
		t.Errorf("picked %s, want 3g.40gb, asked for", choice.Profile)
	}
}
