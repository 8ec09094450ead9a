//go:build gpu

// Real-GPU tests: `make test-gpu` on a machine with an NVIDIA GPU, its driver,
// python3 and PyTorch. They run the built migadvisor (MIGADVISOR_BIN) as a
// separate process, with the real NVML. With MIGADVISOR_GPU_ARTIFACTS set,
// what they saw is kept there (for docs/performance.md and testdata/).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/bench/gpu"
	"github.com/migadvisor/migadvisor/bench/monitor"
	"github.com/migadvisor/migadvisor/slurm"
)

// allocSteps holds 1, then 4, then 6 GiB on the GPU for a while each, asks
// NVML (through nvidia-smi) how much memory its process uses at each step,
// frees it all, and exits with status 3.
const allocSteps = `
import json, os, subprocess, sys, time
import torch

def nvml_view():
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        pid, used = [f.strip() for f in line.split(",")]
        if int(pid) == os.getpid():
            return float(used)
    return None

report = {"steps": []}
x = None
for gib in (1, 4, 6):
    x = None
    torch.cuda.empty_cache()  # hand the last step's memory back: each step holds only its own
    x = torch.ones(gib * (1 << 30) // 4, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    time.sleep(1.5)
    report["steps"].append({"gib": gib, "nvml_process_mib": nvml_view(),
                            "torch_reserved_mib": torch.cuda.memory_reserved() / (1 << 20)})
    time.sleep(0.5)
x = None
torch.cuda.empty_cache()
time.sleep(1)
report["device"] = torch.cuda.get_device_name(0)
with open(sys.argv[1], "w") as f:
    json.dump(report, f)
print("MIGADVISOR_WORK 3 steps")
sys.exit(3)
`

type gpuReport struct {
	Device string `json:"device"`
	Steps  []struct {
		GiB            int      `json:"gib"`
		NVMLProcessMiB *float64 `json:"nvml_process_mib"`
		TorchReserved  float64  `json:"torch_reserved_mib"`
	} `json:"steps"`
}

func gpuBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("MIGADVISOR_BIN")
	if bin == "" {
		t.Fatal("MIGADVISOR_BIN must name the built migadvisor (make test-gpu sets it)")
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// keep copies an artifact to MIGADVISOR_GPU_ARTIFACTS when set.
func keep(t *testing.T, name string, data []byte) {
	if dir := os.Getenv("MIGADVISOR_GPU_ARTIFACTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// leanBinary is migadvisor-monitor beside MIGADVISOR_BIN, as make build puts it.
func leanBinary(t *testing.T) string {
	lean := filepath.Join(filepath.Dir(gpuBinary(t)), "migadvisor-monitor")
	if _, err := os.Stat(lean); err != nil {
		t.Fatalf("%v (make build makes it)", err)
	}
	return lean
}

// The RSS target, 30 MB, in MiB.
const maxRSSMiB = 30e6 / (1 << 20)

// TestGPUMonitorPyTorch runs the lean monitor, as sweep variants do.
func TestGPUMonitorPyTorch(t *testing.T) {
	bin := leanBinary(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "alloc_steps.py")
	if err := os.WriteFile(script, []byte(allocSteps), 0o644); err != nil {
		t.Fatal(err)
	}
	reportPath, summaryPath := filepath.Join(dir, "report.json"), filepath.Join(dir, "summary.json")
	cmd := exec.Command(bin, "--out", summaryPath, "--interval", "200ms", "--", "python3", script, reportPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	keep(t, "monitor-pytorch.stderr", stderr.Bytes())
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit %v, want the script's status 3", err)
	}
	raw, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	keep(t, "monitor-pytorch.json", raw)
	sum, err := monitor.ReadSummary(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep gpuReport
	data, err := os.ReadFile(reportPath)
	if err == nil {
		err = json.Unmarshal(data, &rep)
	}
	if err != nil {
		t.Fatal(err)
	}
	keep(t, "pytorch-report.json", data)

	nvmlMax := 0.0
	for _, s := range rep.Steps {
		if s.NVMLProcessMiB == nil {
			t.Fatalf("nvidia-smi did not list the process at %d GiB", s.GiB)
		}
		nvmlMax = max(nvmlMax, *s.NVMLProcessMiB)
	}
	peak, dev := sum.PeakMiB()
	if dev == nil || sum.NVML != "ok" || sum.ExitStatus != 3 {
		t.Fatalf("summary: %s", raw)
	}
	if dev.ProcessScope != gpu.ScopeTree || dev.PeakProcessMiB == nil {
		t.Errorf("the process was not matched to the command's tree: scope %s", dev.ProcessScope)
	}
	if rel := math.Abs(peak-nvmlMax) / nvmlMax; rel > 0.05 {
		t.Errorf("monitor peak %.0f MiB vs NVML's view %.0f MiB: %.1f%% apart, want within 5%%", peak, nvmlMax, 100*rel)
	} else {
		t.Logf("monitor peak %.0f MiB, NVML's view %.0f MiB (%.2f%% apart); torch reserved at 6 GiB: %.0f MiB", peak, nvmlMax, 100*rel, rep.Steps[2].TorchReserved)
	}
	if peak < 6*1024 || peak > 8*1024 || dev.PeakUsedMiB < peak {
		t.Errorf("peak %.0f MiB below the 6 GiB held, or above the device's use %.0f", peak, dev.PeakUsedMiB)
	}
	if !dev.MIG && (dev.Utilization != gpu.UtilSupported || dev.UtilGPUMax == nil) {
		t.Errorf("a whole GPU should report utilization: %s", dev.Utilization)
	}
	if sum.Overhead == nil || sum.Overhead.MaxRSSMiB > maxRSSMiB {
		t.Errorf("monitor overhead %+v, want under 30 MB RSS", sum.Overhead)
	} else {
		t.Logf("monitor overhead: %.3f s CPU (%.2f%% of a core), %.1f MiB max RSS", sum.Overhead.CPUSeconds, sum.Overhead.CPUPercent, sum.Overhead.MaxRSSMiB)
	}
	// collect reads the same figure from the job output's line.
	ev, err := slurm.ScanOutput(strings.NewReader(stdout.String()+stderr.String()), slurm.ScanOptions{})
	if err != nil || math.Abs(ev.GPUPeakMiB-math.Round(peak)) > 0.5 || ev.Work != 3 {
		t.Errorf("scanned line: peak %v work %v err %v", ev.GPUPeakMiB, ev.Work, err)
	}
}

// A command killed by a signal gives 128+N, and the monitor says so.
func TestGPUMonitorSignalStatus(t *testing.T) {
	bin := gpuBinary(t)
	cmd := exec.Command(bin, "monitor", "--", "python3", "-c", "import os, signal; os.kill(os.getpid(), signal.SIGUSR1)")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+10 {
		t.Fatalf("exit %v, want 138\n%s", err, out)
	}
}

func TestGPUCatalogDiscover(t *testing.T) {
	bin := gpuBinary(t)
	out, err := exec.Command(bin, "catalog", "discover", "--json").Output()
	if err != nil {
		t.Fatalf("catalog discover: %v", err)
	}
	keep(t, "catalog-discover.json", out)
	var found struct {
		GPUs []struct {
			Name     string `json:"name"`
			Profiles []any  `json:"profiles"`
		} `json:"gpus"`
	}
	if err := json.Unmarshal(out, &found); err != nil || len(found.GPUs) == 0 || len(found.GPUs[0].Profiles) == 0 {
		t.Fatalf("discover: %v %s", err, out)
	}
	site, err := exec.Command(bin, "catalog", "discover").Output()
	if err != nil {
		t.Fatalf("catalog discover: %v", err)
	}
	keep(t, "catalog-discover.toml", site)
}
