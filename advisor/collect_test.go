package advisor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/store"
	"github.com/migadvisor/migadvisor/bench/gpu"
	"github.com/migadvisor/migadvisor/bench/monitor"
	"github.com/migadvisor/migadvisor/catalog"
)

func testCollector(t *testing.T) *Collector {
	t.Helper()
	site, err := catalog.Resolve("wulver")
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &Collector{Store: st, Site: site, Cluster: "c1"}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Output files are matched by Slurm's name patterns, the job name included:
// train3-4.out belongs to job 4 (named train3), not to job 3 (named train).
func TestScanOutputsFindsFilesByPattern(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	dump := "JobIDRaw|JobID|State|JobName|WorkDir|AllocTRES\n" +
		"3|3|COMPLETED|train|/nowhere|gres/gpu:a100_10g=1\n" +
		"4|4|COMPLETED|train3|/nowhere|gres/gpu:a100=1\n" +
		"20|19_2|FAILED|sweep|/nowhere|gres/gpu:a100_20g=1\n" +
		"21|21|COMPLETED|quiet|/nowhere|\n"
	res, err := col.ImportDump(ctx, strings.NewReader(dump))
	if err != nil || res.New != 4 {
		t.Fatalf("import: %+v %v", res, err)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "train3-4.out"), "MIGADVISOR_WORK 44 steps\n")
	write(t, filepath.Join(dir, "train.3.out"), "MIGADVISOR_WORK 33 steps\n")
	write(t, filepath.Join(dir, "sweep_19_2.out"), "RuntimeError: CUDA error: out of memory\n")
	out, err := col.ScanOutputs(ctx, []string{dir}, nil)
	if err != nil || out.Scanned != 3 || out.GPUOOMs != 1 || out.Work != 2 {
		t.Fatalf("scan: %+v %v", out, err)
	}
	recs, err := col.Store.History(ctx, store.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	work := map[string]float64{}
	for _, r := range recs {
		if r.Work != nil {
			work[r.JobID] = *r.Work
		}
		if r.JobID == "19_2" && (r.OOM() != "gpu" || r.Profile != "2g.20gb") {
			t.Errorf("array task: oom %q profile %q", r.OOM(), r.Profile)
		}
	}
	if work["3"] != 33 || work["4"] != 44 || len(work) != 2 {
		t.Errorf("work by job: %v", work)
	}
	again, _ := col.ScanOutputs(ctx, []string{dir}, nil)
	if again.Scanned != 0 || again.Unchanged != 3 {
		t.Errorf("a second scan re-read unchanged files: %+v", again)
	}
	time.Sleep(10 * time.Millisecond)
	write(t, filepath.Join(dir, "train.3.out"), "MIGADVISOR_WORK 33 steps\nMIGADVISOR_WORK 34 steps\n")
	if third, _ := col.ScanOutputs(ctx, []string{dir}, nil); third.Scanned != 1 {
		t.Errorf("a grown file was not re-read: %+v", third)
	}
}

// A tracked job's output is found through its script's --output, expanded for the job.
func TestScanOutputsExpandsScriptPattern(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	work := t.TempDir()
	script := filepath.Join(work, "job.sh")
	write(t, script, "#!/bin/bash\n#SBATCH -o logs/%x-%j.log\nsrun train\n")
	dump := "JobIDRaw|JobID|State|JobName|WorkDir|AllocTRES\n7|7|TIMEOUT|gmx|" + work + "|gres/gpu:a100_40g=1\n"
	if _, err := col.ImportDump(ctx, strings.NewReader(dump)); err != nil {
		t.Fatal(err)
	}
	if err := col.Store.RecordSubmissions(ctx, []store.Submission{{Cluster: "c1", JobID: "7", Fingerprint: "f", Source: script,
		Script: script, Submitted: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(work, "logs", "gmx-7.log"),
		"slurmstepd: error: *** JOB 7 ON n1 CANCELLED AT 2026-11-21T01:35:47 DUE TO TIME LIMIT ***\n")
	out, err := col.ScanOutputs(ctx, nil, nil)
	if err != nil || out.Scanned != 1 || len(out.Missing) != 0 {
		t.Fatalf("scan: %+v %v", out, err)
	}
	recs, _ := col.Store.History(ctx, store.HistoryFilter{Fingerprint: "f"})
	if len(recs) != 1 || !recs[0].TimeLimitHit || recs[0].OutputPath != filepath.Join(work, "logs", "gmx-7.log") {
		t.Fatalf("record: %+v", recs)
	}
}

// The monitor's summary beside the output wins over its stderr line (which
// may have gone to another file); a summary that cannot be read is reported
// and the output's own evidence stands.
func TestScanOutputsReadsMonitorSummary(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	dump := "JobIDRaw|JobID|State|JobName|WorkDir|AllocTRES\n" +
		"3|3|COMPLETED|train|/nowhere|gres/gpu:a100_10g=1\n" +
		"4|4|COMPLETED|train|/nowhere|gres/gpu:a100_10g=1\n"
	if _, err := col.ImportDump(ctx, strings.NewReader(dump)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "slurm-3.out"), "epoch 1\n")
	write(t, filepath.Join(dir, "slurm-4.out"), "MIGADVISOR_GPU peak_mib=2000 total_mib=9728 device=A100 MIG 1g.10gb\n")
	process := 5120.0
	sum := &monitor.Summary{Version: monitor.SummaryVersion, JobID: "3", Samples: 9, NVML: "ok", Devices: []*gpu.DeviceStats{{
		Device:  gpu.Device{Name: "NVIDIA A100-SXM4-80GB MIG 1g.10gb", MIG: true, Profile: "1g.10gb", TotalMiB: 9728},
		Samples: 9, PeakUsedMiB: 5400, PeakProcessMiB: &process, ProcessScope: gpu.ScopeTree, Utilization: gpu.UtilUnsupported,
	}}}
	if err := sum.Write(filepath.Join(dir, "migadvisor-3.json")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "migadvisor-4.json"), "{not json")
	out, err := col.ScanOutputs(ctx, []string{dir}, nil)
	if err != nil || out.GPUMemory != 2 || len(out.Unread) != 1 || !strings.Contains(out.Unread[0], "migadvisor-4.json") {
		t.Fatalf("scan: %+v %v", out, err)
	}
	recs, _ := col.Store.History(ctx, store.HistoryFilter{})
	peaks := map[string]string{}
	for _, r := range recs {
		peaks[r.JobID] = fmt.Sprintf("%v/%v/%s/%s", *r.GPUMemPeakMiB(), *r.MonitorTotalMiB, r.MonitorUtil, r.MonitorSource)
	}
	if peaks["3"] != "5120/9728/unsupported/summary" || peaks["4"] != "2000/9728//line" {
		t.Errorf("peaks %v", peaks)
	}
}

// The summary and stderr line the monitor wrote on a real H100 (testdata/nvml)
// are read as that job's GPU memory: NVML's own view of the process.
func TestScanOutputsRealH100Monitor(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	if _, err := col.ImportDump(ctx, strings.NewReader("JobIDRaw|JobID|State|JobName|WorkDir|AllocTRES\n4242|4242|COMPLETED|alloc|/nowhere|gres/gpu:a100=1\n")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for src, dst := range map[string]string{"h100-monitor-pytorch.stderr": "slurm-4242.out", "h100-monitor-pytorch.json": "migadvisor-4242.json"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "nvml", src))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, dst), string(data))
	}
	var view struct {
		Steps []struct {
			NVMLProcessMiB float64 `json:"nvml_process_mib"`
		} `json:"steps"`
	}
	raw, _ := os.ReadFile(filepath.Join("..", "testdata", "nvml", "h100-pytorch-nvml-view.json"))
	if err := json.Unmarshal(raw, &view); err != nil {
		t.Fatal(err)
	}
	nvmlMax := 0.0
	for _, s := range view.Steps {
		nvmlMax = max(nvmlMax, s.NVMLProcessMiB)
	}
	if _, err := col.ScanOutputs(ctx, []string{dir}, nil); err != nil {
		t.Fatal(err)
	}
	recs, _ := col.Store.History(ctx, store.HistoryFilter{})
	r := recs[0]
	if peak := *r.GPUMemPeakMiB(); peak < 0.95*nvmlMax || peak > 1.05*nvmlMax || r.MonitorSource != "summary" {
		t.Errorf("peak %v from %s; NVML's view %v", peak, r.MonitorSource, nvmlMax)
	}
	if r.MonitorUtil != "supported" || r.MonitorUtilMax == nil || r.GPUDevice != "NVIDIA H100 80GB HBM3" || *r.MonitorTotalMiB != 81559 {
		t.Errorf("record %+v", r)
	}
}
