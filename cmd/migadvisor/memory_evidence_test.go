//go:build !noreport

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// evidenceRow is a completed job of a sacct dump on a whole A100 of
// wulver, run from dir; usage is its step's TRESUsageInMax ("" none).
func evidenceRow(id, dir, usage string) string {
	return fmt.Sprintf("%s|%s|wulver|carol|COMPLETED|0:0|2026-11-20T01:00:00|2026-11-20T01:00:00|2026-11-20T01:10:00|600|1|8G|cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=8G,node=1||job|%s\n", id, id, dir) +
		fmt.Sprintf("%s.batch|%s.batch|wulver|carol|COMPLETED|0:0|2026-11-20T01:00:00|2026-11-20T01:00:00|2026-11-20T01:10:00|600|1|||%s|batch|%s\n", id, id, usage, dir)
}

const evidenceHeader = "JobIDRaw|JobID|Cluster|User|State|ExitCode|Submit|Start|End|ElapsedRaw|AllocCPUS|ReqMem|AllocTRES|TRESUsageInMax|JobName|WorkDir\n"

// The plain flow for a script on a whole A100 whose peak was 23.55 GB
// (Wulver's QLoRA job: 5.68 GB allocated, 23.55 GB reserved): what its
// script runs and what its output prints decide what that peak proves.
// Each framework by the lines it prints of itself (Hugging Face, Lightning,
// Keras, JAX, CuPy), and a Python program with nothing else to say, hold
// memory beyond their need: the peak is a ceiling, the slices it is above
// are not known, never high. What shows a compiled code, or nothing at
// all, leaves the peak the need, and the slices below it high.
func TestFrameworksByWhatTheyPrint(t *testing.T) {
	const peak = "MIGADVISOR_GPU peak_mib=24115 used_peak_mib=24115 total_mib=81559 samples=120 scope=tree device=NVIDIA A100-SXM4-80GB\n"
	ceiling := map[string]string{"1g.10gb": "unknown", "2g.20gb": "unknown", "3g.40gb": "low", "full": "low"}
	need := map[string]string{"1g.10gb": "high", "2g.20gb": "high", "3g.40gb": "low", "full": "low"}
	for _, c := range []struct {
		name, body, output string
		kind, software     string
		risks              map[string]string
	}{
		{"Hugging Face", "bash run.sh\n", "Loading checkpoint shards: 100%|██████████| 2/2 [00:03<00:00,  1.52s/it]\n" +
			"{'loss': 1.8731, 'grad_norm': 0.4562, 'learning_rate': 0.0002, 'epoch': 0.25}\n", "caching", "PyTorch", ceiling},
		{"Lightning", "bash run.sh\n", "INFO: GPU available: True (cuda), used: True\nINFO: LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0]\n", "caching", "PyTorch", ceiling},
		{"Keras", "bash run.sh\n", "Epoch 1/10\n469/469 ━━━━━━━━━━━━━━━━━━━━ 5s 10ms/step - accuracy: 0.9213 - loss: 0.2710\n", "preallocates", "TensorFlow", ceiling},
		{"JAX", "bash run.sh\n", "[CudaDevice(id=0)]\n", "preallocates", "JAX", ceiling},
		{"CuPy", "bash run.sh\n", "  File \"cupy/_core/core.pyx\", line 1,476, in cupy._core.core._ndarray_base.__add__\n", "caching", "CuPy", ceiling},
		{"a Python program", "srun python train.py\n", "step 100 loss 1.2\n", "interpreted", "a Python framework", ceiling},
		{"a Python traceback", "bash run.sh\n", "Traceback (most recent call last):\n  File \"/home/carol/train.py\", line 3, in <module>\n", "interpreted", "a Python framework", ceiling},
		{"Python beside a compiled code", "python prep.py\nsrun ./md_solver -i in.dat\n", "step 100\n", "allocates", "a compiled program", need},
		{"nothing known", "bash run.sh\n", "step 100\n", "", "", need},
	} {
		t.Run(c.name, func(t *testing.T) {
			isolate(t)
			dir := t.TempDir()
			t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "history.db"))
			script := filepath.Join(dir, "job.sh")
			os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --mem=8G\n"+c.body), 0o644)
			dump := filepath.Join(dir, "sacct.psv")
			os.WriteFile(dump, []byte(evidenceHeader+evidenceRow("50", dir, "")), 0o644)
			os.WriteFile(filepath.Join(dir, "slurm-50.out"), []byte(c.output+peak), 0o644)
			mustRunCLI(t, "track", "--cluster", "wulver", script, "50")
			mustRunCLI(t, "collect", "--sacct-file", dump, "--cluster", "wulver", "--outputs", dir)
			rec := recommendJSON(t, script)
			for _, p := range rec.Profiles {
				if p.OOMRisk != c.risks[p.Profile] {
					t.Errorf("%s: %s (%s), want %s", p.Profile, p.OOMRisk, p.Reason, c.risks[p.Profile])
				}
			}
			held := rec.Holder
			if c.kind == "" && held != nil || c.kind != "" && (held == nil || held.Kind != c.kind || held.Software != c.software) {
				t.Errorf("held by %+v, want %s by %s", held, c.kind, c.software)
			}
		})
	}
}

// A compiled solver's peak sampled by Slurm (gres/gpumem, every 30 s or
// so) counts once, under the share of the slice kept free: its 30.5 GiB
// fits 3g.40gb's 39.5 GiB (77%), where ×1.2 and then 80% kept it off.
// recommend advises the slice, and report lists the solver's jobs on the
// whole GPU as jobs the slice would have done, with the figure as seen.
func TestASampledPeakHasOneMargin(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "history.db"))
	t.Setenv("MIGADVISOR_SITE", reportSite(t, ""))
	script := filepath.Join(dir, "md.sh")
	os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --mem=8G\nsrun gmx mdrun -s topol.tpr\n"), 0o644)
	dump := filepath.Join(dir, "sacct.psv")
	os.WriteFile(dump, []byte(evidenceHeader+evidenceRow("50", dir, "gres/gpumem=31232M,gres/gpuutil=10")+
		strings.ReplaceAll(evidenceRow("51", dir, "gres/gpumem=31232M,gres/gpuutil=10"), "2026-11-20T01", "2026-11-21T01")), 0o644)
	mustRunCLI(t, "track", "--cluster", "wulver", script, "50", "51")
	mustRunCLI(t, "collect", "--sacct-file", dump, "--cluster", "wulver", "--outputs", dir)
	rec := recommendJSON(t, script)
	for _, p := range rec.Profiles {
		if want := map[string]string{"1g.10gb": "high", "2g.20gb": "high", "3g.40gb": "low", "full": "low"}[p.Profile]; p.OOMRisk != want {
			t.Errorf("%s: %s (%s), want %s", p.Profile, p.OOMRisk, p.Reason, want)
		}
	}
	if rec.Recommended == nil || *rec.Recommended != "3g.40gb" {
		t.Errorf("recommended %v: %s", rec.Recommended, rec.Reason)
	}

	text := mustRunCLI(t, "report", "--since", "2026-11-01", "--until", "2026-12-01", "--json")
	var rep struct {
		Scripts []struct {
			Recommended string  `json:"recommended"`
			Jobs        int     `json:"jobs"`
			SeenMiB     float64 `json:"gpu_mem_seen_mib"`
			NeedMiB     float64 `json:"gpu_mem_need_mib"`
			MeasuredBy  string  `json:"measured_by"`
		} `json:"scripts"`
	}
	if err := json.Unmarshal([]byte(text), &rep); err != nil {
		t.Fatalf("report --json: %v: %s", err, text)
	}
	if len(rep.Scripts) != 1 || rep.Scripts[0].Recommended != "3g.40gb" || rep.Scripts[0].Jobs != 2 ||
		rep.Scripts[0].NeedMiB != 31232 || rep.Scripts[0].SeenMiB != 31232 || rep.Scripts[0].MeasuredBy != "sacct" {
		t.Errorf("report --json: %+v", rep.Scripts)
	}
}

// A ceiling is never shown above the GPU's memory: a PyTorch job whose
// Slurm-sampled peak was 76.7 GiB of the whole A100's 79.3 is at most
// that, in every row of the table and in --json, not ≤92.0G/79.3G; nor
// is the ceiling of an earlier version of the script, whose edit may
// need a quarter more.
func TestACeilingIsNeverAboveTheGPU(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "history.db"))
	script := filepath.Join(dir, "train.sh")
	body := "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --mem=8G\npython3 - <<'EOF'\nimport torch\nEOF\n"
	os.WriteFile(script, []byte(body), 0o644)
	dump := filepath.Join(dir, "sacct.psv")
	os.WriteFile(dump, []byte(evidenceHeader+evidenceRow("50", dir, "gres/gpumem=78541M,gres/gpuutil=90")), 0o644)
	mustRunCLI(t, "track", "--cluster", "wulver", script, "50")
	mustRunCLI(t, "collect", "--sacct-file", dump, "--cluster", "wulver", "--outputs", dir)
	check := func(when string) {
		t.Helper()
		text := mustRunCLI(t, "recommend", script)
		cells := regexp.MustCompile(`≤([\d.]+)G/([\d.]+)G`).FindAllStringSubmatch(text, -1)
		if len(cells) != 4 {
			t.Fatalf("%s: no ceiling in each row:\n%s", when, text)
		}
		for _, m := range cells {
			if v, _ := strconv.ParseFloat(m[1], 64); v > 79.3 {
				t.Errorf("%s: a ceiling above the GPU's 79.3G: %s\n%s", when, m[0], text)
			}
		}
		out, _, _ := migadvisor(t, "recommend", "--json", script)
		var rec struct {
			Ceiling *struct {
				MiB float64 `json:"mib"`
			} `json:"gpu_mem_ceiling"`
		}
		if err := json.Unmarshal([]byte(out), &rec); err != nil || rec.Ceiling == nil || rec.Ceiling.MiB > 81203 {
			t.Errorf("%s: --json's ceiling %+v (%v)", when, rec.Ceiling, err)
		}
	}
	check("as sampled")
	// Edited in place: its runs are an earlier version's now.
	os.WriteFile(script, []byte(body+"echo edited\n"), 0o644)
	check("an earlier version's")
}
