//go:build !noreport

package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// emulate runs the command per profile under a (fake) MPS daemon, records
// the runs and prints them; without MPS it runs the command once.
func TestEmulate(t *testing.T) {
	isolate(t)
	oldMonitor, oldMeasure := emulateMonitor, emulateMeasure
	measure, _ := filepath.Abs("../../bench/emulate/testdata/fake-measure-slice")
	emulateMonitor, emulateMeasure = nil, func() []string { return []string{measure} }
	t.Cleanup(func() { emulateMonitor, emulateMeasure = oldMonitor, oldMeasure })
	fake, _ := filepath.Abs("../../bench/emulate/testdata/fake-mps-control")
	t.Setenv("MIGADVISOR_MPS_CONTROL", fake)
	out := filepath.Join(t.TempDir(), "emu")
	text, errOut, code := migadvisor(t, "emulate", "--out", out, "--profiles", "2g.20gb,1g.10gb", "--",
		"sh", "-c", "echo ${CUDA_MPS_ACTIVE_THREAD_PERCENTAGE:-all}")
	if code != 0 || !strings.Contains(text, "1g.10gb  13%  9728M") || !strings.Contains(errOut, "2g.20gb completed") {
		t.Fatalf("exit %d\n%s\n%s", code, text, errOut)
	}
	var rec slurm.EmulationRecord
	data, _ := os.ReadFile(filepath.Join(out, "emulated.json"))
	if err := json.Unmarshal(data, &rec); err != nil || len(rec.Runs) != 2 || rec.Runs[0].Profile != "1g.10gb" || rec.Site != "wulver" {
		t.Fatalf("%v: %s", err, data)
	}
	// Each slice was measured: MPS's 13% gave 16 of the H100's 132 SMs and
	// 38% of its bandwidth.
	if sm, bw, ok := rec.RanAt(rec.Runs[0], catalog.RatedClockMHz(rec.GPU)); !ok || math.Abs(sm-16.0/132) > 1e-9 || math.Abs(bw-1129.0/2970) > 1e-9 {
		t.Errorf("1g.10gb ran at %v %v (%v): %s", sm, bw, ok, data)
	}
	got, _ := os.ReadFile(filepath.Join(out, "2g.20gb.out"))
	if strings.TrimSpace(string(got)) != "26" {
		t.Errorf("2g.20gb's run saw %q", got)
	}

	// Inside a Slurm job the runs go where collect looks: migadvisor-emulate-JOBID.
	t.Chdir(t.TempDir())
	t.Setenv("SLURM_JOB_ID", "77")
	if _, errOut, code := migadvisor(t, "emulate", "--profiles", "1g.10gb", "--", "true"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if data, err := os.ReadFile(filepath.Join("migadvisor-emulate-77", "emulated.json")); err != nil || !strings.Contains(string(data), `"job_id": "77"`) {
		t.Errorf("in a job: %v, %s", err, data)
	}

	t.Setenv("MIGADVISOR_MPS_CONTROL", "/nonexistent/nvidia-cuda-mps-control")
	text, errOut, code = migadvisor(t, "emulate", "--out", out, "--json", "--", "true")
	if code != 0 || !strings.Contains(errOut, "cannot emulate") || !strings.Contains(text, `"profile": "plain"`) {
		t.Errorf("without MPS: exit %d\n%s\n%s", code, text, errOut)
	}
	if _, errOut, code = migadvisor(t, "emulate"); code != 2 || !strings.Contains(errOut, "emulate needs a command") {
		t.Errorf("no command: exit %d, %s", code, errOut)
	}
}
