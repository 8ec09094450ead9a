package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/store"
	"github.com/migadvisor/migadvisor/slurm"
)

// migadvisor runs the CLI in-process with the given arguments.
func migadvisor(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(append([]string{"migadvisor"}, args...), &out, &errOut)
	return out.String(), errOut.String(), code
}

// isolate keeps the user's and the system's site files out of a test.
func isolate(t *testing.T) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("MIGADVISOR_SITE", "")
	t.Setenv("MIGADVISOR_DB", "")
}

func TestSweepIsRecordedInTheHistory(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "h", "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	dir := t.TempDir()
	if _, errOut, code := migadvisor(t, "sweep", example+"gromacs.sh", "--out", dir); code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	script, _ := slurm.ReadScript(example + "gromacs.sh")
	sweeps, err := st.Sweeps(context.Background(), script.Fingerprint())
	if err != nil || len(sweeps) != 1 || sweeps[0].Dir != dir || len(sweeps[0].Variants) != 4 {
		t.Errorf("history: %+v, %v", sweeps, err)
	}
	// A history that cannot be written warns but does not fail the sweep.
	t.Setenv("MIGADVISOR_DB", filepath.Join(example, "gromacs.sh", "history.db"))
	_, errOut, code := migadvisor(t, "sweep", example+"gromacs.sh", "--out", t.TempDir())
	if code != 0 || !strings.HasPrefix(errOut, "migadvisor: warning: the sweep is not in the history") {
		t.Errorf("unwritable history: exit %d, %q", code, errOut)
	}
}

const example = "../../examples/"

func TestFlagsBeforeOrAfterArguments(t *testing.T) {
	isolate(t)
	var outputs []string
	for _, args := range [][]string{
		{"sweep", example + "pytorch_mnist.sh", "--out", "DIR", "--profiles", "1g.10gb,full", "--json"},
		{"sweep", "--out", "DIR", "--json", example + "pytorch_mnist.sh", "--profiles=1g.10gb,full"},
		{"--site", "wulver", "sweep", "--profiles", "1g.10gb,full", "--out=DIR", "--json", example + "pytorch_mnist.sh"},
		{"sweep", example + "pytorch_mnist.sh", "--site", "wulver", "--json", "--out", "DIR", "--profiles", "1g.10gb,full"},
	} {
		dir := t.TempDir()
		for i := range args {
			args[i] = strings.Replace(args[i], "DIR", dir, 1)
		}
		out, errOut, code := migadvisor(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var rec struct {
			Profiles []string `json:"profiles"`
		}
		if err := json.Unmarshal([]byte(out), &rec); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		outputs = append(outputs, strings.Join(rec.Profiles, ","))
		if _, err := os.Stat(filepath.Join(dir, "full.sh")); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	for _, o := range outputs {
		if o != "1g.10gb,full" {
			t.Errorf("profiles %q, want 1g.10gb,full", o)
		}
	}
}

func TestLintExitCodesAndJSON(t *testing.T) {
	isolate(t)
	out, _, code := migadvisor(t, "lint", example+"multi_slice_misuse.sh", "--json")
	if code != 1 {
		t.Errorf("lint of a script with errors exits %d, want 1", code)
	}
	var rep struct {
		Findings []struct {
			Line     int    `json:"line"`
			Severity string `json:"severity"`
			Code     string `json:"code"`
			Message  string `json:"message"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Findings) != 1 ||
		rep.Findings[0].Code != "multi-mig-slice" || rep.Findings[0].Line != 7 || rep.Findings[0].Severity != "error" {
		t.Errorf("lint --json = %s (%v)", out, err)
	}
	out, _, code = migadvisor(t, "lint", "--json", example+"pytorch_mnist.sh")
	if code != 0 || !strings.Contains(out, `"findings": []`) {
		t.Errorf("clean script: exit %d, %s", code, out)
	}
	out, _, code = migadvisor(t, "lint", example+"no_gpu_request.sh")
	if code != 0 || !strings.HasPrefix(out, "../../examples/no_gpu_request.sh:9: warning: late-directive: ") {
		t.Errorf("warnings only: exit %d, %q", code, out)
	}
}

func TestSUCommand(t *testing.T) {
	isolate(t)
	tests := []struct {
		args          []string
		su, suPerHour float64
	}{
		{[]string{"--profile", "2g.20gb", "--cpus", "1", "--mem", "4G", "--hours", "0.556"}, 2.78, 5},
		{[]string{"--profile", "1g.10gb", "--cpus", "4"}, 6, 6},
		{[]string{"--profile", "full", "--cpus", "4", "--mem", "64G"}, 32, 32},
		{[]string{"--profile", "full", "--cpus", "4", "--qos", "low", "--time", "2:00:00"}, 0, 0},
		{[]string{"--profile", "3g.40gb", "--time", "1-00:00:00"}, 9 * 24, 9},
		{[]string{example + "pytorch_mnist.sh"}, 1.5, 3},                     // 1 CPU, 4000M, 30 min
		{[]string{example + "full_gpu.sh", "--hours", "2"}, 34, 17},          // script's request, flag's hours
		{[]string{example + "full_gpu.sh", "--profile", "1g.10gb"}, 2.95, 3}, // flag's profile, script's 59 min
	}
	for _, tc := range tests {
		out, errOut, code := migadvisor(t, append([]string{"su", "--json"}, tc.args...)...)
		var r struct {
			SU        float64 `json:"su"`
			SUPerHour float64 `json:"su_per_hour"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("su %v: exit %d %s %s", tc.args, code, out, errOut)
		}
		if r.SU != tc.su || r.SUPerHour != tc.suPerHour {
			t.Errorf("su %v = %g SU, %g SU/h; want %g and %g", tc.args, r.SU, r.SUPerHour, tc.su, tc.suPerHour)
		}
	}
	out, _, _ := migadvisor(t, "su", "--profile", "2g.20gb", "--mem", "4G", "--hours", "0.556")
	if strings.TrimSpace(out) != "2g.20gb, 1 CPU, 4 GiB RAM, 0.556 h in gpu on wulver: 2.78 SU (5 SU/h)" {
		t.Errorf("text output %q", out)
	}
	if _, errOut, code := migadvisor(t, "su", "--profile", "9g.90gb"); code != 1 || !strings.Contains(errOut, "profiles: 1g.10gb") {
		t.Errorf("unknown profile: exit %d %s", code, errOut)
	}
	if _, _, code := migadvisor(t, "su"); code != 2 {
		t.Errorf("su without a profile exits %d, want 2", code)
	}
	if _, _, code := migadvisor(t, "su", "--profile", "full", "--hours", "1", "--time", "1:00:00"); code != 2 {
		t.Errorf("--hours with --time exits %d, want 2", code)
	}
}

func TestCatalogCommand(t *testing.T) {
	isolate(t)
	out, _, code := migadvisor(t, "catalog", "--json")
	var rep catalogReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("exit %d: %s", code, out)
	}
	want := map[string]float64{"1g.10gb": 3, "2g.20gb": 5, "3g.40gb": 9, "full": 17}
	for _, p := range rep.Profiles {
		if p.SUPerHour != want[p.Name] {
			t.Errorf("%s: %g SU/h for 1 CPU + 4 GB, want %g", p.Name, p.SUPerHour, want[p.Name])
		}
	}
	if rep.Site != "wulver" || len(rep.Profiles) != 4 || rep.Profiles[0].Request != "--gres=gpu:a100_10g:1" || rep.Profiles[0].SMs != 14 {
		t.Errorf("catalog = %+v", rep)
	}
	text, _, _ := migadvisor(t, "catalog")
	if !strings.Contains(text, "2g.20gb  --gres=gpu:a100_20g:1  28") {
		t.Errorf("text catalog:\n%s", text)
	}
	// export prints a site file that loads back as the same site.
	exported, _, _ := migadvisor(t, "catalog", "export")
	file := filepath.Join(t.TempDir(), "site.toml")
	os.WriteFile(file, []byte(exported), 0o644)
	if out, errOut, code := migadvisor(t, "--site", file, "catalog", "--json"); code != 0 || !strings.Contains(out, `"site": "wulver"`) {
		t.Errorf("exported site: exit %d %s", code, errOut)
	}
}

func TestSiteEnvTwin(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_SITE", "../../examples/sites/h100.toml")
	out, _, code := migadvisor(t, "catalog", "--json")
	if code != 0 || !strings.Contains(out, `"site": "example-h100"`) {
		t.Errorf("MIGADVISOR_SITE ignored: %s", out)
	}
	// The flag wins over the environment.
	out, _, _ = migadvisor(t, "catalog", "--json", "--site", "wulver")
	if !strings.Contains(out, `"site": "wulver"`) {
		t.Errorf("--site did not override MIGADVISOR_SITE: %s", out)
	}
}

func TestBadSiteFileNamesTheLine(t *testing.T) {
	isolate(t)
	file := filepath.Join(t.TempDir(), "site.toml")
	os.WriteFile(file, []byte("version = 1\nname = \"x\"\ncolour = 3\n"), 0o644)
	_, errOut, code := migadvisor(t, "--site", file, "catalog")
	if code != 1 || errOut != "migadvisor: "+file+":3: unknown key \"colour\" at the top level\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{
		{"frobnicate"},
		{"lint"},
		{"lint", "a.sh", "b.sh"},
		{"lint", "--no-such-flag", "a.sh"},
		{"sweep", example + "pytorch_mnist.sh"},
		{"catalog", "nonsense"},
	} {
		if _, errOut, code := migadvisor(t, args...); code != 2 || !strings.HasPrefix(errOut, "migadvisor: ") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one message", args, code, errOut)
		}
	}
	if _, errOut, code := migadvisor(t, "lint", "/no/such/job.sh"); code != 1 || !strings.Contains(errOut, "/no/such/job.sh") {
		t.Errorf("missing file: exit %d %q", code, errOut)
	}
}

// TestHelpHasExamples: every command's help shows examples.
func TestHelpHasExamples(t *testing.T) {
	isolate(t)
	var walk func(prefix []string, cmds []*cli.Command)
	walk = func(prefix []string, cmds []*cli.Command) {
		for _, c := range cmds {
			path := append(append([]string{}, prefix...), c.Name)
			out, _, code := migadvisor(t, append(path, "--help")...)
			if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "migadvisor "+strings.Join(path, " ")) {
				t.Errorf("%v --help: exit %d, no examples:\n%s", path, code, out)
			}
			walk(path, c.Subcommands)
		}
	}
	app := newApp(nil, nil)
	walk(nil, app.Commands)
	if out, _, _ := migadvisor(t, "--help"); !strings.Contains(out, "Examples:") || !strings.Contains(out, "Exit status") {
		t.Errorf("top-level help:\n%s", out)
	}
	if out, _, code := migadvisor(t, "--version"); code != 0 || !strings.Contains(out, "migadvisor version") {
		t.Errorf("--version: %d %q", code, out)
	}
}

func TestDiscoverWithoutGPUFails(t *testing.T) {
	isolate(t)
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("this machine has an NVIDIA driver; the no-NVML path is covered in bench/gpu")
	}
	_, errOut, code := migadvisor(t, "catalog", "discover")
	if code != 1 || !strings.Contains(errOut, "NVML is not available") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, stderr %q: want one clear line and exit 1", code, errOut)
	}
}

func TestSUScriptWithUnknownGPUType(t *testing.T) {
	isolate(t)
	file := filepath.Join(t.TempDir(), "job.sh")
	os.WriteFile(file, []byte("#!/bin/bash\n#SBATCH -t 10\n#SBATCH --gres=gpu:v100:1\nrun\n"), 0o644)
	_, errOut, code := migadvisor(t, "su", file)
	if code != 1 || errOut != "migadvisor: "+file+":3: GPU type \"v100\" is not a profile of site wulver\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
