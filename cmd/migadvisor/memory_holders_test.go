package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recommendation is the part of recommend --json these tests read.
type recommendation struct {
	Recommended *string `json:"recommended"`
	Reason      string  `json:"reason"`
	NextStep    struct {
		Kind     string   `json:"kind"`
		Profiles []string `json:"profiles"`
	} `json:"next_step"`
	Need    *struct{ Kind string } `json:"gpu_mem_need"`
	Ceiling *struct {
		SeenMiB float64 `json:"seen_mib"`
	} `json:"gpu_mem_ceiling"`
	Holder   *struct{ Kind, Software, Why string } `json:"gpu_mem_holder"`
	Notes    []string                              `json:"notes"`
	Profiles []struct {
		Profile string `json:"profile"`
		OOMRisk string `json:"oom_risk"`
		Reason  string `json:"oom_risk_reason"`
	} `json:"profiles"`
}

// The plain flow on the H100 captures of two jobs whose peak is not their
// need (testdata/nvml/h100-memory-holders): JAX preallocating 75% of the
// device (1.3 GiB allocated, a 60 GiB peak on the whole GPU) and PyTorch's
// cache growing into the device (3.7 GiB allocated, 72.9 GiB reserved).
// One run on the whole GPU: its peak is a ceiling, every slice is unknown,
// the whole GPU is advised with the probe of the smallest, and the reason
// says what held the memory and how that is known. With the framework's
// own allocated peak the slices are settled; after the emulation, each
// profile completed.
func TestRecommendSaysWhatAPeakProves(t *testing.T) {
	for _, c := range []struct {
		job, software, kind string
		seenMiB             float64
	}{
		{"prealloc", "JAX", "preallocates", 61428},
		{"cache", "PyTorch", "caching", 74654},
	} {
		t.Run(c.job, func(t *testing.T) {
			isolate(t)
			dir := t.TempDir()
			t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "history.db"))
			from := filepath.Join("..", "..", "testdata", "nvml", "h100-memory-holders", c.job)
			script := filepath.Join(dir, c.job+".sh")
			if err := os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --mem=8G\npython3 train.py\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			dump := filepath.Join(dir, "sacct.psv")
			row := func(id, start, end string) string {
				return id + "|" + id + "|migdev|carol|COMPLETED|0:0|2026-11-20T" + start + "|2026-11-20T" + start + "|2026-11-20T" + end + "|1|1|8G|cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=8G,node=1|" + c.job + "|" + dir + "\n"
			}
			header := "JobIDRaw|JobID|Cluster|User|State|ExitCode|Submit|Start|End|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName|WorkDir\n"
			os.WriteFile(dump, []byte(header+row("50", "01:00:00", "01:10:00")), 0o644)
			copyFile(t, filepath.Join(from, "full.out"), filepath.Join(dir, "slurm-50.out"))
			mustRunCLI(t, "track", script, "50")
			mustRunCLI(t, "collect", "--sacct-file", dump, "--outputs", dir)
			rec := recommendJSON(t, script)
			for _, p := range rec.Profiles {
				want := "unknown"
				if p.Profile == "full" {
					want = "low"
				}
				if p.OOMRisk != want {
					t.Errorf("%s: %s (%s), want %s", p.Profile, p.OOMRisk, p.Reason, want)
				}
			}
			if rec.Recommended == nil || *rec.Recommended != "full" || rec.NextStep.Kind != "probe" || strings.Join(rec.NextStep.Profiles, ",") != "1g.10gb" {
				t.Errorf("recommended %v, next %+v: %s", rec.Recommended, rec.NextStep, rec.Reason)
			}
			if rec.Need != nil || rec.Ceiling == nil || rec.Ceiling.SeenMiB != c.seenMiB || rec.Holder == nil || rec.Holder.Kind != c.kind ||
				rec.Holder.Why != "job 50's output shows "+map[string]string{"JAX": "jax", "PyTorch": "torch"}[c.software] {
				t.Errorf("need %+v, ceiling %+v, holder %+v", rec.Need, rec.Ceiling, rec.Holder)
			}
			if r := rec.Profiles[0].Reason; !strings.Contains(r, "no need but a ceiling") || !strings.Contains(r, c.software) {
				t.Errorf("1g.10gb's reason: %s", r)
			}
			text, _, _ := migadvisor(t, "recommend", script)
			if !strings.Contains(text, "whether 1g.10gb, which is smaller, would fit is not known") || !strings.Contains(text, "migadvisor recommend --probe --profiles 1g.10gb") {
				t.Errorf("recommend says:\n%s", text)
			}

			// The framework's own allocated peak settles the slices.
			os.WriteFile(dump, []byte(header+row("50", "01:00:00", "01:10:00")+row("51", "02:00:00", "02:10:00")), 0o644)
			copyFile(t, filepath.Join(from, "whole.out"), filepath.Join(dir, "slurm-51.out"))
			mustRunCLI(t, "track", script, "51")
			mustRunCLI(t, "collect", "--sacct-file", dump, "--outputs", dir)
			rec = recommendJSON(t, script)
			if rec.Need == nil || rec.Need.Kind != "allocated" || rec.Profiles[0].OOMRisk != "low" {
				t.Errorf("with the allocated peak: need %+v, 1g.10gb %s (%s)", rec.Need, rec.Profiles[0].OOMRisk, rec.Profiles[0].Reason)
			}

			// The emulation: each profile completed under its cap (JAX's
			// preallocation backing off under the cap is no OOM).
			os.WriteFile(dump, []byte(header+row("52", "03:00:00", "03:10:00")), 0o644)
			emulationFrom(t, from, dir, "52")
			os.WriteFile(filepath.Join(dir, "slurm-52.out"), []byte("done\n"), 0o644)
			mustRunCLI(t, "track", script, "52")
			mustRunCLI(t, "collect", "--sacct-file", dump, "--outputs", dir)
			rec = recommendJSON(t, script)
			for _, p := range rec.Profiles {
				if p.OOMRisk != "low" || !strings.Contains(p.Reason, "completed") {
					t.Errorf("after the emulation, %s: %s (%s)", p.Profile, p.OOMRisk, p.Reason)
				}
			}
		})
	}
}

func recommendJSON(t *testing.T, script string) recommendation {
	t.Helper()
	out, errOut, code := migadvisor(t, "recommend", "--json", script)
	var rec recommendation
	if err := json.Unmarshal([]byte(out), &rec); code != 0 || err != nil {
		t.Fatalf("recommend --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
	return rec
}

// history's naming of the framework whose peak is only a ceiling, in the
// table and in --json, is TestGolden's (testdata/history/held-by*).

// A run made with preallocation off (a --no-prealloc probe's settings,
// printed in its output) holds what it uses: its 1.9 GiB peak on the whole
// H100 is the JAX job's need, which the same script's 60 GiB peak with
// preallocation is not; the slices are then judged by it. And a sweep
// with --no-prealloc writes variants that say what they change.
func TestAPeakWithPreallocationOffIsTheNeed(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "history.db"))
	from := filepath.Join("..", "..", "testdata", "nvml", "h100-memory-holders", "prealloc")
	script := filepath.Join(dir, "jax.sh")
	os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --mem=8G\npython3 - <<'EOF'\nimport jax\nEOF\n"), 0o644)
	dump := filepath.Join(dir, "sacct.psv")
	os.WriteFile(dump, []byte("JobIDRaw|JobID|Cluster|User|State|ExitCode|Submit|Start|End|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName|WorkDir\n"+
		"50|50|migdev|carol|COMPLETED|0:0|2026-11-20T01:00:00|2026-11-20T01:00:00|2026-11-20T01:10:00|1|1|8G|cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=8G,node=1|jax.sh|"+dir+"\n"+
		"51|51|migdev|carol|COMPLETED|0:0|2026-11-20T02:00:00|2026-11-20T02:00:00|2026-11-20T02:10:00|1|1|8G|cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=8G,node=1|jax.sh|"+dir+"\n"), 0o644)
	copyFile(t, filepath.Join(from, "full.out"), filepath.Join(dir, "slurm-50.out"))
	copyFile(t, filepath.Join(from, "whole-noprealloc.out"), filepath.Join(dir, "slurm-51.out"))
	mustRunCLI(t, "track", script, "50", "51")
	mustRunCLI(t, "collect", "--sacct-file", dump, "--outputs", dir)
	rec := recommendJSON(t, script)
	if rec.Need == nil || rec.Need.Kind != "peak" || rec.Profiles[0].OOMRisk != "low" || !strings.Contains(rec.Profiles[0].Reason, "1.9 GiB") {
		t.Errorf("need %+v, 1g.10gb %s (%s)", rec.Need, rec.Profiles[0].OOMRisk, rec.Profiles[0].Reason)
	}

	out := filepath.Join(dir, "sweep")
	mustRunCLI(t, "sweep", "--out", out, "--no-prealloc", "--no-monitor", script)
	variant, err := os.ReadFile(filepath.Join(out, "1g.10gb.sh"))
	if err != nil || !strings.Contains(string(variant), "# Frameworks allocate what they use here, so the GPU peak is the need (migadvisor --no-prealloc).") ||
		!strings.Contains(string(variant), "export XLA_PYTHON_CLIENT_PREALLOCATE=false") {
		t.Errorf("the variant: %v\n%s", err, variant)
	}
}
