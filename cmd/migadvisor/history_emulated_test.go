package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// emulationOf lays the real capture of testdata/nvml/h100-emulate (an
// H100, a process holding 14 GiB) out as migadvisor emulate leaves it in
// job key's working directory: dir/migadvisor-emulate-KEY/.
func emulationOf(t *testing.T, dir, key string) {
	t.Helper()
	emulationFrom(t, "../../testdata/nvml/h100-emulate", dir, key)
}

// emulationFrom lays the capture in from out as emulationOf does.
func emulationFrom(t *testing.T, from, dir, key string) {
	t.Helper()
	to := filepath.Join(dir, "migadvisor-emulate-"+key)
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(e.Name(), "h100-emulate-")
		if name == "h100-emulate.json" {
			name = "emulated.json"
		}
		if err := os.WriteFile(filepath.Join(to, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// history --json lists, per job that ran migadvisor emulate, its emulated
// runs as collect found them beside the job's output: the 1g.10gb run out
// of memory under its cap, the others' peaks, the whole GPU's run with all
// its SMs and no cap; a job that ran none has no "emulated". The table is
// the same as without them.
func TestHistoryJSONListsEmulatedRuns(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	dump := filepath.Join(t.TempDir(), "sacct.psv")
	if err := os.WriteFile(dump, []byte("JobIDRaw|JobID|State|ElapsedRaw|AllocTRES|JobName\n"+
		"5|5|COMPLETED|600|cpu=1,mem=4G,gres/gpu:a100=1|emu\n"+
		"6|6|COMPLETED|600|cpu=1,mem=4G,gres/gpu:a100=1|train\n"+
		"7|7|COMPLETED|600|cpu=1,mem=4G,gres/gpu:a100=1|cnn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outputs := t.TempDir()
	emulationOf(t, outputs, "5")
	emulationFrom(t, "../../testdata/nvml/h100-emulate-workloads/deepcnn", outputs, "7")
	for _, id := range []string{"5", "6", "7"} {
		if err := os.WriteFile(filepath.Join(outputs, "slurm-"+id+".out"), []byte("done\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustRunCLI(t, "collect", "--sacct-file", dump, "--outputs", outputs)
	out, errOut, code := migadvisor(t, "history", "--json")
	var jobs []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &jobs); code != 0 || err != nil || len(jobs) != 3 {
		t.Fatalf("history: exit %d, %v: %s%s", code, err, out, errOut)
	}
	byID := map[string]map[string]json.RawMessage{}
	for _, j := range jobs {
		var id string
		json.Unmarshal(j["job_id"], &id)
		byID[id] = j
	}
	if e, ok := byID["6"]["emulated"]; ok {
		t.Errorf("job 6 ran no emulation, has %s", e)
	}
	var runs []map[string]any
	if err := json.Unmarshal(byID["5"]["emulated"], &runs); err != nil || len(runs) != 4 {
		t.Fatalf("job 5's emulated runs: %v: %s", err, byID["5"]["emulated"])
	}
	want := []string{
		`{"bandwidth_share":null,"exit_status":1,"gpu":"NVIDIA H100 80GB HBM3","gpu_peak_mib":9558,"mem_limit":"0=9728M","oom":"gpu","outcome":"failed","profile":"1g.10gb","seconds":7.718,"sm_pct":13,"sm_share":null}`,
		`{"bandwidth_share":null,"exit_status":0,"gpu":"NVIDIA H100 80GB HBM3","gpu_peak_mib":14488,"mem_limit":"0=19968M","oom":null,"outcome":"completed","profile":"2g.20gb","seconds":5.27,"sm_pct":26,"sm_share":null}`,
		`{"bandwidth_share":null,"exit_status":0,"gpu":"NVIDIA H100 80GB HBM3","gpu_peak_mib":14548,"mem_limit":"0=40448M","oom":null,"outcome":"completed","profile":"3g.40gb","seconds":6.105,"sm_pct":39,"sm_share":null}`,
		`{"bandwidth_share":null,"exit_status":0,"gpu":"NVIDIA H100 80GB HBM3","gpu_peak_mib":14854,"mem_limit":null,"oom":null,"outcome":"completed","profile":"full","seconds":5.102,"sm_pct":100,"sm_share":null}`,
	}
	for i, r := range runs {
		got, _ := json.Marshal(r) // its keys sorted
		if string(got) != want[i] {
			t.Errorf("run %d:\n got %s\nwant %s", i, got, want[i])
		}
	}
	// An emulation that measured its slices says at what share of the
	// whole GPU each ran: the CNN's 1g.10gb at 16 of the H100's 132 SMs (at
	// the whole GPU's clock) and its copy bandwidth, 1122.5 of 2954 GB/s.
	var cnn []map[string]any
	if err := json.Unmarshal(byID["7"]["emulated"], &cnn); err != nil || len(cnn) != 4 {
		t.Fatalf("job 7's emulated runs: %v: %s", err, byID["7"]["emulated"])
	}
	if bw, _ := cnn[0]["bandwidth_share"].(float64); cnn[0]["sm_share"] != 0.121 || math.Abs(bw-1122.5/2954) > 0.005 || cnn[3]["sm_share"] != 1.0 {
		t.Errorf("measured shares: %v", cnn)
	}
	// The job's own evidence is its own: no OOM, no GPU peak.
	if string(byID["5"]["oom"]) != "null" || string(byID["5"]["gpu_mem_peak_mib"]) != "null" {
		t.Errorf("job 5: oom %s, peak %s", byID["5"]["oom"], byID["5"]["gpu_mem_peak_mib"])
	}
	text, errOut, code := migadvisor(t, "history")
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[0], "JOB ID") || strings.Contains(strings.ToLower(text), "emulat") {
		t.Errorf("history's table: exit %d: %s%s", code, text, errOut)
	}
}

// What recommend prints of a script's emulation job, collected and
// tracked, is TestGolden's (testdata/recommend/emulated).

// The plain flow of a job emulated on another GPU than the site's: collect
// finds the emulation (the CIFAR-10 deep CNN on an H100, fed by one CPU)
// beside the job's output, a run on the site's whole A100 gives the times,
// and recommend scales them as the emulation did, by the time the GPU was
// busy on each emulated slice: the emulated wall times alone differ by less
// than their noise (10.0, 8.3, 8.3 and 10.1 s of training on 1g.10gb,
// 2g.20gb, 3g.40gb and full), the busy time falls from 4.5 to 1.1 s. By the wall times alone 1g.10gb would
// take 1.06× 3g.40gb's time; by the busy time 1.3×, start-up included.
func TestRecommendScalesByTheEmulationsBusyTime(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	dump := filepath.Join(dir, "sacct.psv")
	if err := os.WriteFile(dump, []byte(`JobIDRaw|JobID|Cluster|User|Account|State|ExitCode|Submit|Start|End|ElapsedRaw|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName|WorkDir
40|40|migdev|carol|physics|COMPLETED|0:0|2026-11-20T01:00:00|2026-11-20T01:00:05|2026-11-20T01:02:00|115|1|1|4G|cpu=1,gres/gpu:h100=1,gres/gpu=1,mem=4G,node=1|cnn|`+dir+`
41|41|migdev|carol|physics|COMPLETED|0:0|2026-11-20T02:00:00|2026-11-20T02:00:05|2026-11-20T02:00:35|30|1|1|4G|cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=4G,node=1|cnn|`+dir+`
`), 0o644); err != nil {
		t.Fatal(err)
	}
	emulationFrom(t, "../../testdata/nvml/h100-emulate-workloads/deepcnn", dir, "40")
	for _, id := range []string{"40", "41"} {
		if err := os.WriteFile(filepath.Join(dir, "slurm-"+id+".out"), []byte("done\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "cnn.sh")
	if err := os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --mem=4G\npython vision_train.py\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := migadvisor(t, "track", script, "40", "41"); code != 0 {
		t.Fatalf("track: %s", errOut)
	}
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", dump, "--outputs", dir); code != 0 {
		t.Fatalf("collect: %s", errOut)
	}
	runtime, why := recommendedRuntimes(t, script)
	if runtime["1g.10gb"] < 1.2*runtime["3g.40gb"] || !strings.Contains(why, "the GPU was busy") || !strings.Contains(why, "emulation on NVIDIA H100") {
		t.Errorf("1g.10gb %.0f s, 3g.40gb %.0f s (%s)", runtime["1g.10gb"], runtime["3g.40gb"], why)
	}
}
