package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// history --json gives the monitor's memory (DRAM) utilization beside its
// GPU utilization, from its summary file (one a real H100 wrote) or its
// stderr line; null where the device reported none (an A100 MIG slice).
func TestHistoryJSONGivesMemoryUtilization(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	dump := filepath.Join(t.TempDir(), "sacct.psv")
	os.WriteFile(dump, []byte("JobIDRaw|JobID|State|ElapsedRaw|AllocTRES|JobName\n"+
		"5|5|COMPLETED|600|cpu=1,mem=4G,gres/gpu:a100=1|train\n"+
		"6|6|COMPLETED|600|cpu=1,mem=4G,gres/gpu:a100=1|train\n"+
		"7|7|COMPLETED|600|cpu=1,mem=4G,gres/gpu:a100_10g=1|train\n"), 0o644)
	outputs := t.TempDir()
	summary, err := os.ReadFile("../../testdata/nvml/h100-monitor-pytorch.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(outputs, "migadvisor-5.json"), summary, 0o644)
	os.WriteFile(filepath.Join(outputs, "slurm-5.out"), []byte("epoch 1\n"), 0o644)
	os.WriteFile(filepath.Join(outputs, "slurm-6.out"), []byte("MIGADVISOR_GPU peak_mib=30100 used_peak_mib=30500 total_mib=81559 samples=120 "+
		"scope=tree util=mean:43,max:98 mem_util=mean:21,max:60 device=NVIDIA H100 80GB HBM3\n"), 0o644)
	os.WriteFile(filepath.Join(outputs, "slurm-7.out"), []byte("MIGADVISOR_GPU peak_mib=5120 used_peak_mib=5400 total_mib=9728 samples=118 "+
		"scope=tree util=unsupported profile=1g.10gb device=NVIDIA A100-SXM4-80GB MIG 1g.10gb\n"), 0o644)
	mustRunCLI(t, "collect", "--sacct-file", dump, "--outputs", outputs)
	out, errOut, code := migadvisor(t, "history", "--json")
	var raw []map[string]any
	if err := json.Unmarshal([]byte(out), &raw); code != 0 || err != nil || len(raw) != 3 {
		t.Fatalf("history: exit %d, %v: %s%s", code, err, out, errOut)
	}
	got := map[string]string{}
	for _, j := range raw {
		if _, ok := j["gpu_mem_util_pct"]; !ok {
			t.Errorf("job %v lacks gpu_mem_util_pct: %v", j["job_id"], j)
		}
		got[j["job_id"].(string)] = fmt.Sprintf("gpu %v mem %v", j["gpu_util_pct"], j["gpu_mem_util_pct"])
	}
	want := map[string]string{"5": "gpu 0.3 mem 0.1", "6": "gpu 43 mem 21", "7": "gpu <nil> mem <nil>"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("utilizations %v, want %v", got, want)
	}
}
