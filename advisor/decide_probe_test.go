package advisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/memory"
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
