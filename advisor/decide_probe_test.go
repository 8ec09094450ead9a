package advisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
)

// Where the fit of smaller slices is unknown, the probe proposed is the
// one predicted to save the most, with what it costs; never one predicted
// to cost more than the advice it would replace.
func TestTheProbeProposedIsTheBestPredictedSaving(t *testing.T) {
	// A QLoRA job measured on the whole GPU, scaled like Wulver's
	// fine-tuning: 2g.20gb is predicted cheaper than 1g.10gb, where it runs
	// twice as long.
	site := catalogtest.Wulver(t)
	set, _ := catalog.ReferenceFor(site)
	llm, ok := set.Benchmark("llm-finetuning")
	if !ok {
		t.Fatal("no llm-finetuning reference benchmark")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "finetune.py"), []byte("from peft import LoraConfig\nimport torch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := slurm.Parse(filepath.Join(dir, "job.sh"), []byte(script+"python finetune.py\n"))
	full := newRun("full", 3600).peak(23.5 * 1024)
	rec, err := Recommend(site, Job{Script: "job.sh", Resources: s.Resources, Source: s, Runs: []Run{full, full}, Resembles: llm}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var best *ProfileAdvice
	for i := range rec.Profiles {
		pa := &rec.Profiles[i]
		if pa.OOMRisk == memory.RiskUnknown && pa.SU != nil && (best == nil || *pa.SU < *best.SU) {
			best = pa
		}
	}
	if best == nil {
		t.Fatalf("no unknown profile with a predicted SU: %+v", rec.Profiles)
	}
	if len(rec.NextStep.Profiles) != 1 || rec.NextStep.Profiles[0] != best.Profile {
		t.Errorf("next step %+v, want the probe of %s, predicted cheapest of the unknown profiles", rec.NextStep, best.Profile)
	}
	notes := strings.Join(rec.Notes, "\n")
	if !strings.Contains(notes, "one run costs about") || !strings.Contains(notes, best.Profile) {
		t.Errorf("the notes do not say what the probe of %s costs:\n%s", best.Profile, notes)
	}
	for _, pa := range rec.Profiles {
		t.Logf("%s risk %s SU %v", pa.Profile, pa.OOMRisk, show(pa.SU))
	}
	t.Logf("recommended %v next %s notes %q", show(rec.Recommended), rec.Next, rec.Notes)
}

func show[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// A rate a job's output prints (GROMACS' ns/day, the Trainer's samples/s)
// is no amount of work: a run's work is the rate times its time, in the
// unit the rate counts; an amount stays as it is.
func TestWorkDoneFromARate(t *testing.T) {
	for _, c := range []struct {
		work    float64
		unit    string
		seconds float64
		want    float64
		wantU   string
	}{
		{118.6, "ns/day", 43200, 59.3, "ns"},
		{12.5, "samples/s", 400, 5000, "samples"},
		{5000, "samples", 400, 5000, "samples"},
		{3, "1M tokens", 400, 3, "1M tokens"},
		{12.5, "samples/s", -1, 0, ""},
		{2, "km/furlong", 10, 2, "km/furlong"},
	} {
		got, unit := workDone(c.work, c.unit, c.seconds)
		if unit != c.wantU || got < c.want*0.999 || got > c.want*1.001 {
			t.Errorf("workDone(%g, %q, %g) = %g %q, want %g %q", c.work, c.unit, c.seconds, got, unit, c.want, c.wantU)
		}
	}
}

// Runs that did different amounts of work (a GROMACS job's ns differ from
// run to run) have times that differ by their work as much as by their
// profile: a run on 3g.40gb that did less work, and so took less time than
// the whole GPU's, says nothing of its rate there. The whole GPU's rate,
// scaled as GROMACS scales, prices 3g.40gb per ns, not the times' fit.
func TestDifferentWorkIsScaledFromTheRateAndItsWorkload(t *testing.T) {
	site := catalogtest.Wulver(t)
	set, _ := catalog.ReferenceFor(site)
	gmx, ok := set.Benchmark("gromacs_performance")
	if !ok {
		t.Fatal("no GROMACS reference benchmark")
	}
	s := slurm.Parse("job.sh", []byte(script+"./run.sh\n"))
	runs := []Run{
		newRun("full", 32802).work(45.7, "ns"), newRun("full", 31355).work(41.9, "ns"),
		newRun("3g.40gb", 26923), // its output is lost: no work figure
	}
	rec, err := Recommend(site, Job{Script: "job.sh", Resources: s.Resources, Source: s, Runs: runs, Resembles: gmx}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	full, g3 := profileOf(t, rec, "full"), profileOf(t, rec, "3g.40gb")
	if full.SUPerWork == nil || g3.SUPerWork == nil {
		t.Fatalf("SU per ns: full %v, 3g.40gb %v", full.SUPerWork, g3.SUPerWork)
	}
	// GROMACS: 3g.40gb takes 1.027 times the whole GPU's time, at 12 SU/h
	// against 20 SU/h here: 0.62 times its SU per ns, give or take the
	// model's reading of the table.
	if r := *g3.SUPerWork / *full.SUPerWork; r < 0.5 || r > 0.75 {
		t.Errorf("3g.40gb's SU per ns is %.2f times the whole GPU's (%v, %v), want about 0.62: %s", r, *g3.SUPerWork, *full.SUPerWork, rec.Reason)
	}
}

// Runs that did different amounts of work at one rate differ in runtime by
// their work: the noise a tie is judged within is the spread of their
// rates (here 2%), not of their runtimes (28%).
func TestTheNoiseOfRunsOfDifferentWorkIsTheirRates(t *testing.T) {
	s := slurm.Parse("job.sh", []byte(script+"./run.sh\n"))
	var runs []Run
	for i, sec := range []float64{30000, 36000, 40000, 33000} {
		rate := 10.0 * (1 + 0.02*float64(i%2)) // samples per second
		runs = append(runs, newRun("1g.10gb", sec).work(sec*rate, "samples"))
	}
	rec, err := Recommend(catalogtest.Wulver(t), Job{Script: "job.sh", Resources: s.Resources, Source: s, Runs: runs}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pa := profileOf(t, rec, "1g.10gb")
	if pa.RuntimeSpread == nil || *pa.RuntimeSpread < 0.25 {
		t.Fatalf("runtime spread %v, want the runs' 28%%", *pa.RuntimeSpread)
	}
	if n := noise(&pa); n > 0.03 {
		t.Errorf("noise %.2f, want the rates' spread, about 0.02", n)
	}
}

// A script that asks for the profile recommend names, when a slice it
// cannot rule out yet is predicted to cost less, is not told "nothing to
// change": it is told which slice to measure.
func TestNoNothingToChangeWhileACheaperSliceIsOpen(t *testing.T) {
	full := newRun("full", 3600).peak(60 * 1024)
	full.Software = []string{"jax"}
	rec := recommendScript(t, "python3 -c 'import jax'\n", nil, []Run{full, full})
	var b strings.Builder
	rec.WriteText(&b)
	text := b.String()
	if rec.Recommended == nil || *rec.Recommended != "full" || rec.NextStep.Kind != NextProbe {
		t.Fatalf("recommended %v, next %+v:\n%s", show(rec.Recommended), rec.NextStep, text)
	}
	if strings.Contains(text, "nothing to change") || !strings.Contains(text, rec.NextStep.Profiles[0]+" may cost less: measure it") {
		t.Errorf("the advice says nothing is to change, or not what to measure:\n%s", text)
	}
}

// A tie goes to the smaller profile, but where the profile it passed over
// is predicted to cost less and was never run, the advice names its probe:
// a QLoRA job measured on 1g.10gb, scaled like Wulver's fine-tuning,
// whose 2g.20gb is predicted cheaper within its runs' noise, is told to
// stay and to measure 2g.20gb, with what a run there costs.
func TestATiePassedOverForACheaperUntriedProfileNamesItsProbe(t *testing.T) {
	site := catalogtest.Wulver(t)
	set, _ := catalog.ReferenceFor(site)
	llm, ok := set.Benchmark("llm-finetuning")
	if !ok {
		t.Fatal("no llm-finetuning reference benchmark")
	}
	s := slurm.Parse("job.sh", []byte(script+"python finetune.py\n"))
	var runs []Run
	for _, sec := range []float64{36000, 40000, 44000} { // 20% apart: the noise a tie is judged within
		runs = append(runs, newRun("1g.10gb", sec).peak(7*1024))
	}
	rec, err := Recommend(site, Job{Script: "job.sh", Resources: s.Resources, Source: s, Runs: runs, Resembles: llm}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g1, g2 := profileOf(t, rec, "1g.10gb"), profileOf(t, rec, "2g.20gb")
	if rec.Recommended == nil || *rec.Recommended != "1g.10gb" || g2.SU == nil || *g2.SU >= *g1.SU {
		t.Fatalf("want 1g.10gb by a tie with a cheaper 2g.20gb: recommended %v, SU %v and %v: %s", show(rec.Recommended), show(g1.SU), show(g2.SU), rec.Reason)
	}
	if rec.NextStep.Kind != NextProbe || len(rec.NextStep.Profiles) != 1 || rec.NextStep.Profiles[0] != "2g.20gb" {
		t.Errorf("next step %+v, want the probe of 2g.20gb", rec.NextStep)
	}
	notes := strings.Join(rec.Notes, "\n")
	if !strings.Contains(notes, "2g.20gb") || !strings.Contains(notes, "one run costs about") {
		t.Errorf("the notes do not say why 2g.20gb is worth a run, nor what it costs:\n%s", notes)
	}
}
