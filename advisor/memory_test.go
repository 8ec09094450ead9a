package advisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
)

// recommendScript advises on a script with a body of its own (written in a
// directory with files, when given), as recommend does for job.sh.
func recommendScript(t *testing.T, body string, files map[string]string, runs []Run) *Recommendation {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := slurm.Parse(filepath.Join(dir, "job.sh"), []byte(script+body))
	rec, err := Recommend(catalogtest.Wulver(t), Job{Script: "job.sh", Resources: s.Resources, Source: s, Runs: runs}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func risksOf(rec *Recommendation) map[string]string {
	out := map[string]string{}
	for _, pa := range rec.Profiles {
		out[pa.Profile] = pa.OOMRisk
	}
	return out
}

// Wulver's QLoRA class: a PyTorch job measured once on a full A100, whose
// peak is what the caching allocator held (23.5 GB there against 5.68 GB
// allocated). The peak is a ceiling: the smaller slices are unknown, never
// high, and the next step probes the smallest.
func TestAPeakACachingFrameworkHeldIsACeiling(t *testing.T) {
	files := map[string]string{"finetune.py": "import os\nfrom transformers import AutoModelForCausalLM\nimport torch\n"}
	full := newRun("full", 3600).peak(23.5 * 1024)
	rec := recommendScript(t, "module load python\npython finetune.py --epochs 1\n", files, []Run{full})
	risks := risksOf(rec)
	for _, p := range []string{"1g.10gb", "2g.20gb"} {
		if risks[p] != memory.RiskUnknown {
			pa := profileOf(t, rec, p)
			t.Errorf("%s: %s (%s), want unknown", p, pa.OOMRisk, pa.OOMRiskReason)
		}
	}
	if risks["3g.40gb"] != memory.RiskLow || risks["full"] != memory.RiskLow {
		t.Errorf("3g.40gb and full hold more than the ceiling: %v", risks)
	}
	reason := profileOf(t, rec, "1g.10gb").OOMRiskReason
	for _, want := range []string{"23.5 GiB peak on full", "ceiling", "PyTorch's caching allocator", "finetune.py imports transformers (its line 2)"} {
		if !strings.Contains(reason, want) {
			t.Errorf("the reason does not say %q: %s", want, reason)
		}
	}
	if rec.GPUMemNeed != nil || rec.GPUMemCeiling == nil || rec.GPUMemCeiling.Kind != memory.NeedCeiling || rec.GPUMemHolder == nil || rec.GPUMemHolder.Kind != memory.HolderCaching {
		t.Errorf("need %+v, ceiling %+v, holder %+v", rec.GPUMemNeed, rec.GPUMemCeiling, rec.GPUMemHolder)
	}
	if got := rec.NextStep; got.Kind != NextProbe || len(got.Profiles) != 1 || got.Profiles[0] != "1g.10gb" {
		t.Errorf("next step %+v, want the probe of 1g.10gb", got)
	}
}

// The same peak from a code that allocates what it uses is its need: it
// rules the slices it does not fit out, as before.
func TestAPeakOfACompiledCodeIsItsNeed(t *testing.T) {
	for name, body := range map[string]string{
		"GROMACS":                       "module load gromacs/2023.3\ngmx mdrun -deffnm md -nb gpu\n",
		"nothing to say":                "./my_solver input.dat\n",
		"JAX on the platform allocator": "export XLA_PYTHON_CLIENT_ALLOCATOR=platform\npython - <<'EOF'\nimport jax\nEOF\n",
	} {
		t.Run(name, func(t *testing.T) {
			rec := recommendScript(t, body, nil, []Run{newRun("full", 3600).peak(30 * 1024)})
			risks := risksOf(rec)
			if risks["1g.10gb"] != memory.RiskHigh || risks["2g.20gb"] != memory.RiskHigh || risks["3g.40gb"] != memory.RiskLow {
				t.Errorf("a 30 GiB need: %v", risks)
			}
			if rec.GPUMemNeed == nil || rec.GPUMemNeed.Kind != memory.NeedPeak || rec.GPUMemCeiling != nil {
				t.Errorf("need %+v, ceiling %+v", rec.GPUMemNeed, rec.GPUMemCeiling)
			}
		})
	}
}

// JAX and TensorFlow take a share of the device: two runs on a full A100
// at 62.6 GiB leave every slice unknown, and full is advised with the probe
// of the smallest; the evidence may come from the script's environment,
// its heredoc, or only from the runs' output.
func TestAPreallocatingFrameworksPeakRulesNothingOut(t *testing.T) {
	tf := newRun("full", 600).peak(62.6 * 1024)
	tf.Software = []string{slurm.SoftwareTensorFlow}
	cases := []struct {
		name, body, kind, says string
		runs                   []Run
	}{
		{"JAX in a heredoc", "python3 <<'EOF'\nimport jax.numpy as jnp\nEOF\n", memory.HolderPreallocates, "JAX takes a share of the device",
			[]Run{newRun("full", 600).peak(62.6 * 1024), newRun("full", 610).peak(62.6 * 1024)}},
		{"JAX without preallocation still caches", "export XLA_PYTHON_CLIENT_PREALLOCATE=false\npython3 -c 'import jax'\n", memory.HolderCaching, "XLA_PYTHON_CLIENT_PREALLOCATE=false",
			[]Run{newRun("full", 600).peak(62.6 * 1024)}},
		{"TensorFlow seen in the output only", "python3 train.py\n", memory.HolderPreallocates, "job full's output shows tensorflow", []Run{tf}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := recommendScript(t, c.body, nil, c.runs)
			risks := risksOf(rec)
			for _, p := range []string{"1g.10gb", "2g.20gb", "3g.40gb"} {
				if risks[p] != memory.RiskUnknown {
					t.Errorf("%s: %s, want unknown", p, risks[p])
				}
			}
			if got := recommended(rec); got != "full" {
				t.Errorf("recommended %s: %s", got, rec.Reason)
			}
			if rec.GPUMemHolder == nil || rec.GPUMemHolder.Kind != c.kind {
				t.Fatalf("holder %+v, want %s", rec.GPUMemHolder, c.kind)
			}
			if !strings.Contains(profileOf(t, rec, "1g.10gb").OOMRiskReason, c.says) {
				t.Errorf("the reason does not say %q: %s", c.says, profileOf(t, rec, "1g.10gb").OOMRiskReason)
			}
			if got := rec.NextStep; got.Kind != NextProbe || len(got.Profiles) != 1 || got.Profiles[0] != "1g.10gb" {
				t.Errorf("next step %+v, want the probe of 1g.10gb", got)
			}
		})
	}
}

// A ceiling never outweighs a real need: the framework's own allocated
// peak, or an out-of-memory error, still decides.
func TestARealNeedStillRulesOutUnderAFramework(t *testing.T) {
	body := "python3 -c 'import torch'\n"
	allocated := newRun("full", 3600).peak(23.5 * 1024)
	allocated.AllocatedMiB = 5.68 * 1000 * 1000 * 1000 / (1 << 20)
	if risks := risksOf(recommendScript(t, body, nil, []Run{allocated})); risks["1g.10gb"] != memory.RiskLow {
		t.Errorf("5.3 GiB allocated fits 1g.10gb: %v", risks)
	}
	oom := []Run{newRun("2g.20gb", 60).oom(21000), newRun("full", 3600).peak(40 * 1024)}
	if risks := risksOf(recommendScript(t, body, nil, oom)); risks["1g.10gb"] != memory.RiskHigh || risks["2g.20gb"] != memory.RiskHigh {
		t.Errorf("an OOM on 2g.20gb rules both slices out: %v", risks)
	}
}
