package advisor

import (
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/slurm"
)

func text(r *Recommendation) string {
	var b strings.Builder
	r.WriteText(&b)
	return b.String()
}

// A runtime that is only a bound makes SU per work a bound too, and the
// table says so in both columns (seen: "≥0.0567  0.944").
func TestTheTableMarksABoundInEveryColumnItReaches(t *testing.T) {
	su, perWork, sec := 0.0567, 0.944, 68.0
	rec := &Recommendation{Script: "tjob.sh", Site: "wulver", Basis: BasisNone, Runs: 1,
		Profiles: []ProfileAdvice{{Profile: "1g.10gb", Runs: 1, TimedOut: 1, OOMRisk: memory.RiskLow, UsableMiB: 9728,
			RuntimeS: &sec, RuntimeAtLeast: true, RuntimeSource: BasisPredicted, SU: &su, SUPerWork: &perWork, WorkUnit: "1M samples"}}}
	got := text(rec)
	for _, want := range []string{"SU/1M samples", "≥0.0567", "≥0.944", "≥00:01:08 time limit", "1 timeout", "9.5G", "runtimes predicted: "} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
}

func TestTheTextMarksTheAdviceAndEndsWithTheChange(t *testing.T) {
	rec, saved := &Recommendation{Script: "job.sh", Site: "wulver", Basis: BasisMeasured, Runs: 3, Recommended: ptr("2g.20gb"),
		Reason: "the lowest SU", Next: "migadvisor recommend --probe job.sh", Notes: []string{"a note"},
		Profiles: []ProfileAdvice{{Profile: "1g.10gb"}, {Profile: "2g.20gb", Runs: 3, Completed: 3}}}, 0.5
	rec.Change = &Change{Asks: "full", To: "2g.20gb", SUPerRun: &saved, Lines: []slurm.LineChange{
		{Line: 3, Old: "#SBATCH --gres=gpu:a100:1", New: "#SBATCH --gres=gpu:a100_20g:1"}, {Line: 4, Old: "#SBATCH --qos=x"},
		{New: "#SBATCH --time=1:00:00"}}}
	want := `job.sh on wulver: 3 runs in the history; basis: measured
PROFILE   RUNS  OUTCOME  GPU NEED/USABLE  OOM RISK  RUNTIME  SU
 1g.10gb  0     -        -/0.0M                     -        -
*2g.20gb  3     3 ok     -/0.0M                     -        -

recommend 2g.20gb: the lowest SU
change job.sh:
  line 3  #SBATCH --gres=gpu:a100:1  → #SBATCH --gres=gpu:a100_20g:1
  line 4  #SBATCH --qos=x            (remove)
  add     #SBATCH --time=1:00:00
saves about 0.5 SU a run against full
next: migadvisor recommend --probe job.sh
note: a note
`
	if got := text(rec); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	rec.Change.Lines = nil
	if got := text(rec); !strings.Contains(got, "the script already asks for 2g.20gb: nothing to change\n") {
		t.Errorf("no change to make:\n%s", got)
	}
	cpu := &Recommendation{Script: "cpu.sh", Site: "wulver", CPUOnly: true, Reason: "it asks for no GPU"}
	if got := text(cpu); got != "cpu.sh on wulver: no recommendation: it asks for no GPU\n" {
		t.Errorf("a CPU job: %q", got)
	}
}

func TestTheFirstLineSaysWhatTheAdviceRestsOn(t *testing.T) {
	for _, c := range []struct {
		name string
		rec  Recommendation
		want string
	}{
		{"nothing", Recommendation{Basis: BasisNone}, "no runs of this script in the history; basis: none"},
		{"runs, nothing advised", Recommendation{Basis: BasisNone, Runs: 2}, "2 runs in the history"},
		{"runs", Recommendation{Basis: BasisMeasured, Runs: 1}, "1 run in the history; basis: measured"},
		{"earlier versions", Recommendation{Basis: BasisPredicted, Runs: 2, EarlierRuns: 2},
			"2 runs of an earlier version of this script in the history; basis: predicted"},
		{"some earlier", Recommendation{Basis: BasisMeasured, Runs: 3, EarlierRuns: 1},
			"3 runs in the history, 1 of them of an earlier version; basis: measured"},
		{"memory measured", Recommendation{Basis: BasisMeasured, Runs: 1, GPUMemNeed: &memory.NeedJSON{By: "job 7's peak"}},
			"1 run in the history; basis: measured, GPU memory measured (job 7's peak)"},
		{"a prior", Recommendation{Basis: BasisPrior, Prior: &PriorRef{Benchmark: "qlora"}},
			"no runs of this script yet; the figures are the qlora reference benchmark's (basis: prior)"},
	} {
		if got := c.rec.restsOn(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestTheChangeSaysWhatItSaves(t *testing.T) {
	su := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name string
		ch   Change
		want string
	}{
		{"nothing saved", Change{Because: "a tie"}, "a tie"},
		{"costs more", Change{Asks: "1g.10gb", SUPerRun: su(-0.25), Because: "1g.10gb is not advised"},
			"it costs about 0.25 SU a run more than 1g.10gb: 1g.10gb is not advised"},
		{"saves", Change{Asks: "full", SUPerRun: su(1.5)}, "saves about 1.5 SU a run against full"},
		{"saves monthly", Change{Asks: "full", SUPerRun: su(1.5), RunsPerMonth: 4, SUPerMonth: su(6), Because: "within the noise"},
			"saves about 1.5 SU a run against full; at your rate of 4 runs in 30 days, about 6 SU a month (within the noise)"},
	} {
		if got := c.ch.savingsText(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestTheRuntimeCellSaysHowSureItIs(t *testing.T) {
	sec, spread := 3600.0, 0.12
	for _, c := range []struct {
		name string
		pa   ProfileAdvice
		want string
	}{
		{"unknown", ProfileAdvice{}, "-"},
		{"a bound", ProfileAdvice{RuntimeS: &sec, RuntimeAtLeast: true}, "≥01:00:00 time limit"},
		{"runs", ProfileAdvice{RuntimeS: &sec, RuntimeRuns: 3, RuntimeSpread: &spread, RuntimeSource: BasisMeasured},
			"01:00:00 (3 runs, spread 12%)"},
		{"a run", ProfileAdvice{RuntimeS: &sec, RuntimeRuns: 1, RuntimeSource: BasisMeasured}, "01:00:00 (1 run)"},
		{"predicted", ProfileAdvice{RuntimeS: &sec, RuntimeSource: BasisPredicted, RuntimeRangeS: &[2]float64{3000, 4000}, TimeLimit: "2:00:00"},
			"01:00:00 predicted 00:50:00–01:06:40, needs --time=2:00:00"},
		{"a range of one figure", ProfileAdvice{RuntimeS: &sec, RuntimeSource: BasisPrior, RuntimeRangeS: &[2]float64{3600, 3600}},
			"01:00:00 prior"},
	} {
		if got := c.pa.runtimeCell(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
