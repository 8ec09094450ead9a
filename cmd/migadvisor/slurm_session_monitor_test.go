//go:build slurm

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// monitored is the command line that runs a session's program (a short
// sleep) under the fake monitor, measuring usedMiB.
func monitored(t *testing.T, usedMiB int) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{"env", fmt.Sprintf("%s=%d", fakeMonitorEnv, usedMiB), self, "monitor", "--interval", "100ms", "--", "sleep", "1"}
}

// Sessions measured by the monitor run inside them, on the dev cluster's
// real Slurm: an salloc shell's (the summary in the directory salloc ran
// in), an srun --pty session's (its step's summary), and an Open OnDemand
// app's, submitted as OnDemand does (sbatch, its job name, the session
// directory as working directory and output.log in it), whose program ran
// out of GPU memory. A plain collect, no --outputs, finds them; recommend
// --session shows each figure and the OOM.
func TestSlurmSessionMonitorReachesTheHistory(t *testing.T) {
	work := slurmWorkDir(t)
	since := time.Now().Add(-2 * time.Second).Format("2006-01-02T15:04:05")
	const name, appName = "notebook-shell", "ondemand/sys/dashboard/sys/jupyter"
	session := func(client string, usedMiB int, extra ...string) string {
		args := append([]string{"-J", name, "--gres=gpu:a100_10g:1", "--mem=64M", "-t", "2"}, extra...)
		out, err := exec.Command(client, append(args, monitored(t, usedMiB)...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", client, err, out)
		}
		if !strings.Contains(string(out), fmt.Sprintf("MIGADVISOR_GPU peak_mib=%d ", usedMiB)) {
			t.Fatalf("%s: the monitor measured nothing:\n%s", client, out)
		}
		return string(out)
	}
	session("salloc", 2900)
	session("srun", 3400, "--pty")

	dir := filepath.Join(work, "ondemand/data/sys/dashboard/batch_connect/sys/jupyter/output/0b9c0a52-7d2e-4f0e-9a57-2c1f3b8e6d41")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	wrap := "echo '[I ServerApp] Jupyter Server is running'; " +
		"echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity of 9.50 GiB' >&2; " +
		strings.Join(monitored(t, 9100), " ")
	out, err := exec.Command("sbatch", "--parsable", "-J", appName, "-D", dir, "-o", filepath.Join(dir, "output.log"), "--partition=gpu",
		"--gres=gpu:a100_10g:1", "--mem=64M", "-t", "5", "--wrap", wrap).CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch: %v\n%s", err, out)
	}
	app := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("scancel", app).Run() })
	mustRun(t, "wait", "--timeout", "2m", app)

	var shells, apps sessionAdvice
	for try := 0; ; try++ {
		mustRun(t, "collect", "--since", since)
		shells, apps = sessionAdviceOf(t, name), sessionAdviceOf(t, appName)
		if shells.Sessions == 2 && shells.WithMemory == 2 && apps.Sessions == 1 && apps.WithMemory == 1 || try == 5 {
			break
		}
		time.Sleep(2 * time.Second) // slurmdbd's placeholder of a short job, until the real record is there
	}
	if shells.Sessions != 2 || shells.WithMemory != 2 || shells.PeakMiB == nil || *shells.PeakMiB != 3400 || shells.Recommended != "1g.10gb" {
		t.Errorf("recommend --session %s --json: %+v", name, shells)
	}
	if apps.Sessions != 1 || apps.WithMemory != 1 || apps.PeakMiB == nil || *apps.PeakMiB != 9100 || apps.Recommended == "1g.10gb" {
		t.Errorf("recommend --session %s --json: %+v", appName, apps)
	}
	wants := map[string][]string{
		name:    {"3.3 GiB (monitor)", "2.8 GiB (monitor)"},
		appName: {"8.9 GiB (monitor)  yes", "ran out of GPU memory"},
	}
	for _, s := range []string{name, appName} {
		text := mustRun(t, "recommend", "--session", s)
		t.Logf("recommend --session %s:\n%s", s, text)
		for _, want := range wants[s] {
			if !strings.Contains(text, want) {
				t.Errorf("recommend --session %s: no %q", s, want)
			}
		}
	}
}

// sessionAdviceOf is recommend --session name --json.
func sessionAdviceOf(t *testing.T, name string) sessionAdvice {
	t.Helper()
	var adv sessionAdvice
	if out := mustRun(t, "recommend", "--session", name, "--json"); json.Unmarshal([]byte(out), &adv) != nil {
		t.Fatalf("recommend --session %s --json: %s", name, out)
	}
	return adv
}
