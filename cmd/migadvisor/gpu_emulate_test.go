//go:build gpu

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// hog14 reports the SMs it was given, then holds 14 GiB in 256 MiB blocks,
// the memory hog of issue 23: it must run out of memory on an emulated
// 1g.10gb and fit 2g.20gb and the whole GPU.
const hog14 = `
import torch
print("sms", torch.cuda.get_device_properties(0).multi_processor_count, flush=True)
blocks = [torch.empty(256 << 20, dtype=torch.uint8, device="cuda") for _ in range(14 * 4)]
torch.cuda.synchronize()
print("held", len(blocks) * 256, "MiB", flush=True)
`

// On the real GPU, under real MPS daemons: each emulated profile gets
// fewer SMs than the whole GPU and a memory cap that a CUDA out-of-memory
// error enforces, and no daemon is left behind.
func TestGPUEmulate(t *testing.T) {
	bin := gpuBinary(t)
	if _, err := exec.LookPath("nvidia-cuda-mps-control"); err != nil {
		t.Fatal("no nvidia-cuda-mps-control: the emulation needs CUDA MPS")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "hog.py")
	if err := os.WriteFile(script, []byte(hog14), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "emu")
	cmd := exec.Command(bin, "--site", "wulver", "emulate", "--out", out, "--budget", "2m", "--", "python3", script)
	text, err := cmd.CombinedOutput()
	t.Logf("%s", text)
	if err != nil {
		t.Fatalf("emulate: %v", err)
	}
	data, _ := os.ReadFile(filepath.Join(out, "emulated.json"))
	keep(t, "h100-emulate.json", data)
	var rec slurm.EmulationRecord
	if err := json.Unmarshal(data, &rec); err != nil || len(rec.Runs) != 4 {
		t.Fatalf("%v: %s", err, data)
	}
	sms := map[string]int{}
	for _, r := range rec.Runs {
		body, _ := os.ReadFile(filepath.Join(out, r.Output))
		keep(t, "h100-emulate-"+r.Profile+".out", body)
		for _, line := range strings.Split(string(body), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "sms" {
				sms[r.Profile], _ = strconv.Atoi(f[1])
			}
		}
		oom := strings.Contains(string(body), "out of memory")
		switch {
		case r.Profile == "1g.10gb" && (r.Outcome != "failed" || !oom):
			t.Errorf("1g.10gb (9.5 GiB) should run out of memory holding 14 GiB: %+v\n%s", r, body)
		case r.Profile != "1g.10gb" && r.Outcome != "completed":
			t.Errorf("%s should hold 14 GiB: %+v\n%s", r.Profile, r, body)
		}
		if _, err := os.Stat(filepath.Join(out, r.Summary)); err != nil {
			t.Errorf("%s: no monitor summary: %v", r.Profile, err)
		}
	}
	if !(0 < sms["1g.10gb"] && sms["1g.10gb"] < sms["2g.20gb"] && sms["2g.20gb"] < sms["3g.40gb"] && sms["3g.40gb"] < sms["full"]) {
		t.Errorf("SMs granted: %v", sms)
	}
	// Each slice was measured under its limits: the SMs its process saw
	// are those PyTorch saw, and its copy bandwidth lies between none and
	// the whole GPU's (MPS leaves it more than its share: an H100's 16 SMs
	// drew 38%).
	if rec.Whole == nil || rec.Whole.SMs != sms["full"] {
		t.Errorf("the whole GPU's measure: %+v", rec.Whole)
	}
	for _, r := range rec.Runs {
		sm, bw, ok := rec.RanAt(r, catalog.RatedClockMHz(rec.GPU))
		if !ok || r.Measured.SMs != sms[r.Profile] || bw <= 0 || bw > 1 || (r.Emulated && bw < float64(r.Measured.SMs)/float64(sms["full"])) {
			t.Errorf("%s measured %+v: at %.3f of the SMs, %.3f of the bandwidth (%v)", r.Profile, r.Measured, sm, bw, ok)
		}
	}
	// -x: the process's name, not any command line that mentions it; the
	// kernel keeps 15 characters of it, the same for the control daemon and
	// the server (pgrep matches nothing longer).
	if ps, _ := exec.Command("pgrep", "-x", "nvidia-cuda-mps").Output(); len(strings.TrimSpace(string(ps))) > 0 {
		t.Errorf("an MPS daemon is still running: %s", ps)
	}
	// Each daemon took its sockets with it.
	if pipes, _ := filepath.Glob(filepath.Join(out, "mps-*", "pipe")); len(pipes) > 0 {
		t.Errorf("MPS pipe directories left: %v", pipes)
	}
}
