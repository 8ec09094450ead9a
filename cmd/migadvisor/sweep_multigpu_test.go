package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sweep, and so recommend --probe, refuses a script that uses several GPUs
// on MIG slices, in one line naming the script's line; whole GPUs keep its
// GPU count, and --as-one-gpu sweeps it on one GPU each.
func TestSweepRefusesMultiGPUScript(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	script := example + "multi_slice_misuse.sh"
	out := filepath.Join(t.TempDir(), "sweep")
	stdout, errOut, code := migadvisor(t, "sweep", script, "--out", out)
	want := "migadvisor: " + script + ":7: #SBATCH --gres=gpu:a100_10g:2 asks for 2 GPUs, which one MIG slice cannot stand in for: " +
		"a CUDA process sees one MIG device and slices have no NVLink peer-to-peer, so NCCL cannot join them; " +
		"probe whole GPUs only with --profiles full, or a single-GPU version of the script on slices " +
		"(--as-one-gpu sweeps this one on one GPU each, if it can run so)\n"
	if code != 1 || stdout != "" || errOut != want {
		t.Errorf("exit %d\nstdout %q\nstderr %q\nwant   %q", code, stdout, errOut, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the refused sweep wrote %s", out)
	}
	_, errOut, code = migadvisor(t, "recommend", "--probe", script)
	if code != 1 || !strings.Contains(errOut, "asks for 2 GPUs, which one MIG slice cannot stand in for") {
		t.Errorf("recommend --probe: exit %d %q", code, errOut)
	}

	stdout, errOut, code = migadvisor(t, "sweep", script, "--out", out, "--profiles", "full")
	if code != 0 || !strings.Contains(stdout, "--gres=gpu:a100:2") {
		t.Errorf("--profiles full: exit %d %s%s", code, stdout, errOut)
	}
	stdout, errOut, code = migadvisor(t, "sweep", script, "--out", filepath.Join(t.TempDir(), "one"), "--as-one-gpu")
	if code != 0 || !strings.Contains(stdout, "--gres=gpu:a100_10g:1") || !strings.Contains(stdout, "--gres=gpu:a100:1") {
		t.Errorf("--as-one-gpu: exit %d %s%s", code, stdout, errOut)
	}
}

// --profiles reads as every list flag does: an empty item or spaces are
// nothing, not a profile named "" (recommend --probe reads it so too).
func TestSweepProfilesReadAsAList(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	stdout, errOut, code := migadvisor(t, "sweep", example+"pytorch_mnist.sh", "--out", filepath.Join(t.TempDir(), "sweep"), "--profiles", "1g.10gb,, full")
	if code != 0 || strings.Count(stdout, ".sh") != 2 || !strings.Contains(stdout, "1g.10gb") || !strings.Contains(stdout, "full") {
		t.Errorf("exit %d\n%s%s", code, stdout, errOut)
	}
}
