package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A script that asks for no GPU is a CPU-only job: recommend judges no
// profile (a table of dashes and "probe it" said nothing), says what it
// costs and how to try a slice; sweep says it adds a GPU to every variant.
func TestCPUOnlyScriptIsSaidSo(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	script := jobScript(t, "#!/bin/bash\n#SBATCH --partition=general\n#SBATCH --ntasks=8\n#SBATCH --mem=64G\n#SBATCH --time=2:00:00\nsrun ./a.out\n")
	out, errOut, code := migadvisor(t, "recommend", script)
	want := script + " on wulver: no recommendation: this script asks for no GPU, so it runs on CPUs only (16 SU/h in general) and no GPU profile applies; " +
		"if it should use a GPU, add '#SBATCH --gres=gpu:a100_10g:1' (1g.10gb, the smallest) and measure it with: migadvisor recommend --probe " + script + "\n"
	if code != 0 || out != want || errOut != "" {
		t.Errorf("recommend: exit %d\n%q\nwant\n%q\n%s", code, out, want, errOut)
	}
	out, _, _ = migadvisor(t, "recommend", "--json", script)
	var rec struct {
		CPUOnly     bool `json:"cpu_only"`
		Recommended *string
		Profiles    []any
	}
	if err := json.Unmarshal([]byte(out), &rec); err != nil || !rec.CPUOnly || rec.Recommended != nil || len(rec.Profiles) != 0 {
		t.Errorf("recommend --json: %v %+v", err, rec)
	}
	_, errOut, code = migadvisor(t, "sweep", script, "--out", filepath.Join(t.TempDir(), "sweep"))
	if code != 0 || !strings.Contains(errOut, "asks for no GPU: each variant adds its profile's GPU request") {
		t.Errorf("sweep: exit %d %q", code, errOut)
	}
	// A GPU script is judged as before.
	if out, _, _ := migadvisor(t, "recommend", example+"pytorch_mnist.sh"); strings.Contains(out, "asks for no GPU") || !strings.Contains(out, "PROFILE") {
		t.Errorf("a GPU script: %s", out)
	}
}

// A file sbatch refuses is no CPU job: an empty script, one whose
// directive has no value, one with DOS line breaks. Seen: each printed
// "asks for no GPU … 1 SU/h" and exited 0, its errors in --json alone.
func TestRecommendSaysWhatSbatchWouldRefuse(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	for name, body := range map[string]string{
		"empty":     "",
		"no value":  "#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --gres\nsrun ./a.out\n",
		"dos lines": "#!/bin/bash\r\n#SBATCH --partition=gpu\r\n#SBATCH --gres=gpu:a100:1\r\nsrun ./a.out\r\n",
	} {
		script := jobScript(t, body)
		out, errOut, code := migadvisor(t, "recommend", script)
		if code != 1 || !strings.Contains(out, "note: "+script+":") {
			t.Errorf("%s: exit %d, want 1 with the error's line named:\n%s%s", name, code, out, errOut)
		}
	}
	good := jobScript(t, "#!/bin/bash\n#SBATCH --partition=general\n#SBATCH --ntasks=2\nsrun ./a.out\n")
	if _, errOut, code := migadvisor(t, "recommend", good); code != 0 {
		t.Errorf("a CPU script sbatch takes: exit %d %s", code, errOut)
	}
}
