package collect

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

func testCollector(t *testing.T) *Collector {
	t.Helper()
	site, err := catalog.Resolve("wulver")
	if err != nil {
		t.Fatal(err)
	}
	st, err := history.Open(context.Background(), filepath.Join(t.TempDir(), "history.db"))
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
	recs, err := col.Store.History(ctx, history.HistoryFilter{})
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
	if err := col.Store.RecordSubmissions(ctx, []history.Submission{{Cluster: "c1", JobID: "7", Fingerprint: "f", Source: script,
		Script: script, Submitted: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(work, "logs", "gmx-7.log"),
		"slurmstepd: error: *** JOB 7 ON n1 CANCELLED AT 2026-11-21T01:35:47 DUE TO TIME LIMIT ***\n")
	out, err := col.ScanOutputs(ctx, nil, nil)
	if err != nil || out.Scanned != 1 || len(out.Missing) != 0 {
		t.Fatalf("scan: %+v %v", out, err)
	}
	recs, _ := col.Store.History(ctx, history.HistoryFilter{Fingerprint: "f"})
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
	// A summary as the monitor writes it (bench/monitor checks its writer
	// against the protocol's reader, slurm.ReadMonitorSummary).
	write(t, filepath.Join(dir, "migadvisor-3.json"), `{"version": 1, "job_id": "3", "samples": 9, "nvml": "ok", "devices": [{
  "name": "NVIDIA A100-SXM4-80GB MIG 1g.10gb", "mig": true, "profile": "1g.10gb", "memory_total_mib": 9728,
  "samples": 9, "peak_used_mib": 5400, "peak_process_mib": 5120, "process_scope": "tree", "utilization": "unsupported"}]}`)
	write(t, filepath.Join(dir, "migadvisor-4.json"), "{not json")
	out, err := col.ScanOutputs(ctx, []string{dir}, nil)
	if err != nil || out.GPUMemory != 2 || len(out.Unread) != 1 || !strings.Contains(out.Unread[0], "migadvisor-4.json") {
		t.Fatalf("scan: %+v %v", out, err)
	}
	recs, _ := col.Store.History(ctx, history.HistoryFilter{})
	peaks := map[string]string{}
	for _, r := range recs {
		peaks[r.JobID] = fmt.Sprintf("%v/%v/%s/%s", *r.GPUMemPeakMiB(), *r.MonitorTotalMiB, r.MonitorUtil, r.MonitorSource)
	}
	if peaks["3"] != "5120/9728/unsupported/summary" || peaks["4"] != "2000/9728//line" {
		t.Errorf("peaks %v", peaks)
	}
}

// The monitor's memory utilization reaches the history as its GPU
// utilization does: from its summary file, from its stderr line in the
// job's output or in a separate error file; an older monitor's line
// without mem_util leaves it unknown.
func TestScanOutputsKeepsMemoryUtilization(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	dump := "JobIDRaw|JobID|State|JobName|WorkDir|AllocTRES\n" +
		"5|5|COMPLETED|train|/nowhere|gres/gpu:a100=1\n" +
		"6|6|COMPLETED|train|/nowhere|gres/gpu:a100=1\n" +
		"7|7|COMPLETED|split|/nowhere|gres/gpu:a100=1\n" +
		"8|8|COMPLETED|train|/nowhere|gres/gpu:a100=1\n"
	if _, err := col.ImportDump(ctx, strings.NewReader(dump)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "slurm-5.out"), "epoch 1\n")
	write(t, filepath.Join(dir, "migadvisor-5.json"), `{"version": 1, "job_id": "5", "samples": 9, "nvml": "ok", "devices": [{
  "name": "NVIDIA H100 80GB HBM3", "mig": false, "memory_total_mib": 81559, "samples": 9, "peak_used_mib": 5400,
  "peak_process_mib": 5120, "process_scope": "tree", "utilization": "supported",
  "util_gpu_mean_pct": 40.5, "util_gpu_max_pct": 90, "util_mem_mean_pct": 12.25, "util_mem_max_pct": 33}]}`)
	line := "MIGADVISOR_GPU peak_mib=2000 total_mib=81559 samples=5 scope=tree util=mean:40,max:90 mem_util=mean:12,max:33 device=NVIDIA H100 80GB HBM3\n"
	write(t, filepath.Join(dir, "slurm-6.out"), line)
	write(t, filepath.Join(dir, "split.7.out"), "epoch 1\n")
	write(t, filepath.Join(dir, "split.7.err"), line)
	write(t, filepath.Join(dir, "slurm-8.out"), "MIGADVISOR_GPU peak_mib=2000 total_mib=81559 samples=5 scope=tree util=mean:40,max:90 device=NVIDIA H100 80GB HBM3\n")
	if out, err := col.ScanOutputs(ctx, []string{dir}, nil); err != nil || out.Scanned != 4 {
		t.Fatalf("scan: %+v %v", out, err)
	}
	recs, _ := col.Store.History(ctx, history.HistoryFilter{})
	got := map[string]string{}
	for _, r := range recs {
		got[r.JobID] = fmt.Sprintf("%s %s gpu %v mem %v max %v", r.MonitorSource, r.MonitorUtil, deref(r.GPUUtilizationPct()),
			deref(r.GPUMemUtilizationPct()), deref(r.MonitorMemUtilMax))
	}
	want := map[string]string{
		"5": "summary supported gpu 40.5 mem 12.25 max 33",
		"6": "line supported gpu 40 mem 12 max 33",
		"7": "line supported gpu 40 mem 12 max 33",
		"8": "line supported gpu 40 mem <nil> max <nil>",
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("job %s: %s, want %s", id, got[id], w)
		}
	}
}

// deref is a figure of a record, or <nil>.
func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
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
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "nvml", src))
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
	raw, _ := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "nvml", "h100-pytorch-nvml-view.json"))
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
	recs, _ := col.Store.History(ctx, history.HistoryFilter{})
	r := recs[0]
	if peak := *r.GPUMemPeakMiB(); peak < 0.95*nvmlMax || peak > 1.05*nvmlMax || r.MonitorSource != "summary" {
		t.Errorf("peak %v from %s; NVML's view %v", peak, r.MonitorSource, nvmlMax)
	}
	if r.MonitorUtil != "supported" || r.MonitorUtilMax == nil || r.GPUDevice != "NVIDIA H100 80GB HBM3" || *r.MonitorTotalMiB != 81559 {
		t.Errorf("record %+v", r)
	}
	// Its memory utilization, from the summary (the line of that monitor had none).
	if u := r.GPUMemUtilizationPct(); u == nil || math.Abs(*u-0.0897) > 0.001 || r.MonitorMemUtilMax == nil || *r.MonitorMemUtilMax != 4 {
		t.Errorf("memory utilization %v, max %v; want 0.0897 and 4", deref(u), deref(r.MonitorMemUtilMax))
	}
}

// linkedFixture copies the dev cluster's jobs 17 and 18 (testdata/linked)
// into a directory of their own, imports their accounting, and gives the
// collector a sacct that prints their stored batch scripts.
func linkedFixture(t *testing.T, col *Collector) (work string) {
	t.Helper()
	work = t.TempDir()
	logs, err := os.ReadDir(filepath.Join("testdata", "linked", "logs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range logs {
		data, _ := os.ReadFile(filepath.Join("testdata", "linked", "logs", e.Name()))
		write(t, filepath.Join(work, "logs", e.Name()), string(data))
	}
	dump, err := os.ReadFile(filepath.Join("testdata", "linked", "sacct.psv"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := col.ImportDump(context.Background(), strings.NewReader(strings.ReplaceAll(string(dump), "/tmp/i18o/fx", work))); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	scripts, _ := os.ReadFile(filepath.Join("testdata", "linked", "sacct-batch-script.txt"))
	write(t, filepath.Join(bin, "scripts.txt"), string(scripts))
	write(t, filepath.Join(bin, "sacct"), "#!/bin/sh\ncat \"$(dirname \"$0\")/scripts.txt\"\n")
	os.Chmod(filepath.Join(bin, "sacct"), 0o755)
	col.Slurm = &slurm.Client{Bin: bin}
	return work
}

// Jobs of other users (collect --all-users) are linked to the scripts
// slurmdbd stored, whose --output and --error are expanded for each job:
// a directory, %x, an array's %A_%a (slurmdbd names a task's script 18_0,
// not by its JobIDRaw). The OOM job 17 printed on stderr is found, and the
// array's two tasks are one submission of one script.
func TestLinkScriptsReadsOutputAndErrorOfEachJob(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	work := linkedFixture(t, col)
	linked, err := col.LinkScripts(ctx, 100)
	if err != nil || linked.Linked != 3 || linked.Missing != 0 {
		t.Fatalf("link: %+v %v", linked, err)
	}
	out, err := col.ScanOutputs(ctx, nil, nil)
	if err != nil || out.Scanned != 3 || out.GPUOOMs != 1 || len(out.Missing) != 0 {
		t.Fatalf("scan: %+v %v", out, err)
	}
	recs, err := col.Store.History(ctx, history.HistoryFilter{Tracked: true})
	if err != nil || len(recs) != 3 {
		t.Fatalf("history: %d records, %v", len(recs), err)
	}
	byID := map[string]history.JobRecord{}
	for _, r := range recs {
		byID[r.JobID] = r
	}
	train := byID["17"]
	if train.OOM() != "gpu" || train.OutputPath != filepath.Join(work, "logs", "fxtrain-17.out") || !strings.Contains(train.GPUOOMText, "Tried to allocate 2.00 GiB") {
		t.Errorf("job 17: oom %q in %s: %q", train.OOM(), train.OutputPath, train.GPUOOMText)
	}
	if need := train.GPUNeedMiB; need == nil || math.Abs(*need-10.3*1024) > 0.01 {
		t.Errorf("job 17 needs %v MiB", need)
	}
	for id, acc := range map[string]float64{"18_0": 0.90, "18_1": 0.91} {
		r := byID[id]
		if r.Metrics["acc"] != acc || r.OutputPath != filepath.Join(work, "logs", "fxsweep_"+id+".out") || r.Fingerprint == "" {
			t.Errorf("task %s: metrics %v from %s, fingerprint %q", id, r.Metrics, r.OutputPath, r.Fingerprint)
		}
	}
	if byID["18_0"].Fingerprint != byID["18_1"].Fingerprint || byID["18_0"].Fingerprint == train.Fingerprint {
		t.Errorf("fingerprints: %q %q %q", byID["18_0"].Fingerprint, byID["18_1"].Fingerprint, train.Fingerprint)
	}
	subs, _ := col.Store.Tracked(ctx, history.TrackedFilter{})
	if len(subs) != 2 || subs[0].Stdout != filepath.Join(work, "logs", "fxtrain-17.out") || subs[0].Stderr != filepath.Join(work, "logs", "fxtrain-17.err") {
		t.Errorf("submissions: %+v", subs)
	}
	again, err := col.LinkScripts(ctx, 100)
	if err != nil || again.Linked != 0 || again.Missing != 0 {
		t.Errorf("a second link: %+v %v", again, err)
	}
	if rescan, _ := col.ScanOutputs(ctx, nil, nil); rescan.Scanned != 0 || rescan.Unchanged != 3 {
		t.Errorf("a second scan: %+v", rescan)
	}
}

// A job whose --error is its own file has it read too, whichever way its
// files are known: the paths scontrol gave at submission, the script's
// --error, or the .err beside an .out in --outputs. A line added to the
// error file alone is read at the next collect.
func TestScanOutputsReadsTheErrorFile(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	work := t.TempDir()
	dump := "JobIDRaw|JobID|State|JobName|WorkDir|AllocTRES\n" +
		"1|1|FAILED|tracked|" + work + "|gres/gpu:a100_10g=1\n" +
		"2|2|FAILED|scripted|" + work + "|gres/gpu:a100_10g=1\n" +
		"3|3|FAILED|loose|" + work + "|gres/gpu:a100_10g=1\n" +
		"4|4|FAILED|scripted|" + work + "|gres/gpu:a100_10g=1\n"
	if _, err := col.ImportDump(ctx, strings.NewReader(dump)); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(work, "job.sh")
	write(t, script, "#!/bin/bash\n#SBATCH -o out/%x.%j.out\n#SBATCH -e err/%x.%j.err\nsrun train\n")
	oom := "RuntimeError: CUDA error: out of memory\n"
	write(t, filepath.Join(work, "t.out"), "epoch 1\n")
	write(t, filepath.Join(work, "t.err"), oom)
	write(t, filepath.Join(work, "out", "scripted.2.out"), "epoch 1\n")
	write(t, filepath.Join(work, "err", "scripted.2.err"), oom)
	write(t, filepath.Join(work, "out", "scripted.4.out"), "epoch 1\n")
	write(t, filepath.Join(work, "err", "scripted.4.err"), oom)
	loose := t.TempDir()
	write(t, filepath.Join(loose, "loose.3.out"), "MIGADVISOR_WORK 10 steps\n")
	write(t, filepath.Join(loose, "loose.3.err"), oom)
	if err := col.Store.RecordSubmissions(ctx, []history.Submission{
		{Cluster: "c1", JobID: "1", Fingerprint: "f1", Source: script, Script: script, WorkDir: work,
			Stdout: filepath.Join(work, "t.out"), Stderr: filepath.Join(work, "t.err"), Submitted: time.Now()},
		{Cluster: "c1", JobID: "2", Fingerprint: "f2", Source: script, Script: script, WorkDir: work, Submitted: time.Now()},
		// A sweep records scontrol's stdout alone; the script has the rest.
		{Cluster: "c1", JobID: "4", Fingerprint: "f2", Source: script, Script: script, WorkDir: work,
			Stdout: filepath.Join(work, "out", "scripted.4.out"), Submitted: time.Now()},
	}); err != nil {
		t.Fatal(err)
	}
	out, err := col.ScanOutputs(ctx, []string{loose}, nil)
	if err != nil || out.Scanned != 4 || out.GPUOOMs != 4 || out.Work != 1 {
		t.Fatalf("scan: %+v %v", out, err)
	}
	write(t, filepath.Join(work, "t.err"), oom+"slurmstepd: error: Detected 1 oom_kill event in StepId=1.batch. Some of the step tasks have been OOM Killed.\n")
	os.Chtimes(filepath.Join(work, "t.err"), time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	again, err := col.ScanOutputs(ctx, []string{loose}, nil)
	if err != nil || again.Scanned != 1 || again.HostOOMs != 1 || again.Unchanged != 3 {
		t.Errorf("after the error file grew: %+v %v", again, err)
	}
}

// Jobs that could write no output are not missing theirs: one Slurm could
// not open the file for (exit 0:53), one cancelled before it ran, one Slurm
// failed before it started; one that ran and failed is.
func TestScanOutputsMissesOnlyOutputsThatWereWritten(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	dump := "JobIDRaw|JobID|State|ExitCode|Start|ElapsedRaw|JobName|WorkDir|AllocTRES\n" +
		"2|2|FAILED|0:53|2026-11-23T10:46:57|0|nodir|/nowhere|gres/gpu:a100_10g=1\n" +
		"12|12|CANCELLED by 0|0:0|None|0|pending|/nowhere|gres/gpu:a100_10g=1\n" +
		"13|13|FAILED|1:0|2026-11-23T10:46:57|5|ran|/nowhere|gres/gpu:a100_10g=1\n" +
		"14|14|FAILED|1:0|None|0|rejected|/nowhere|gres/gpu:a100_10g=1\n" +
		"15|15|BOOT_FAIL|0:0|None|0|noboot|/nowhere|gres/gpu:a100_10g=1\n"
	if _, err := col.ImportDump(ctx, strings.NewReader(dump)); err != nil {
		t.Fatal(err)
	}
	var subs []history.Submission
	for _, id := range []string{"2", "12", "13", "14", "15"} {
		subs = append(subs, history.Submission{Cluster: "c1", JobID: id, Fingerprint: "f", Source: "/nowhere/job.sh",
			Script: "/nowhere/job.sh", Stdout: "/nonexistent/dir/" + id + ".out", Submitted: time.Now()})
	}
	if err := col.Store.RecordSubmissions(ctx, subs); err != nil {
		t.Fatal(err)
	}
	out, err := col.ScanOutputs(ctx, nil, nil)
	if err != nil || strings.Join(out.Missing, " ") != "13" {
		t.Errorf("missing %q %v, want job 13's only", out.Missing, err)
	}
}

// Two imports reported as one (a collect of tracked jobs and of the
// wrapper's pending ones) add their GPU figures and unplaced types; the
// types kept are bounded, the jobs on the rest counted.
func TestImportResultPlusAddsPlacements(t *testing.T) {
	a := ImportResult{JobstatsGPU: 1, Unplaced: map[string]int{"x": 1}}
	b := ImportResult{JobstatsGPU: 2, Unplaced: map[string]int{"x": 2, "y": 3}}
	sum := a.Plus(b)
	if sum.JobstatsGPU != 3 || sum.Unplaced["x"] != 3 || sum.Unplaced["y"] != 3 || a.Unplaced["x"] != 1 {
		t.Errorf("sum %+v (a now %+v)", sum, a)
	}
	if got := sum.UnplacedTypes(); len(got) != 2 || got[0] != (GPUTypeJobs{"x", 3}) || got[1] != (GPUTypeJobs{"y", 3}) {
		t.Errorf("types %v", got)
	}
	var many ImportResult
	for i := range MaxUnplacedKept + 5 {
		many.addUnplaced(fmt.Sprint(i), 2)
	}
	many.addUnplaced("0", 1)
	if len(many.Unplaced) != MaxUnplacedKept || many.UnplacedMore != 10 || many.Unplaced["0"] != 3 {
		t.Errorf("%d types kept, %d jobs on the others", len(many.Unplaced), many.UnplacedMore)
	}
}

// An output file last written before its job started is another job's of
// the same id (a cluster beside this one writing slurm-%j.out to the same
// directory, or one from before Slurm's ids started again): its out-of-
// memory error is not the job's, and the collect says so.
func TestScanOutputsLeavesAFileThatPredatesItsJob(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	dump := "JobIDRaw|JobID|State|JobName|WorkDir|AllocTRES|Start|End\n" +
		"7|7|COMPLETED|train|/nowhere|gres/gpu:a100_10g=1|2026-11-20T10:00:00|2026-11-20T11:00:00\n" +
		"8|8|COMPLETED|train|/nowhere|gres/gpu:a100_10g=1|2026-11-20T10:00:00|2026-11-20T11:00:00\n"
	if res, err := col.ImportDump(ctx, strings.NewReader(dump)); err != nil || res.New != 2 {
		t.Fatalf("import: %+v %v", res, err)
	}
	dir := t.TempDir()
	for _, id := range []string{"7", "8"} {
		write(t, filepath.Join(dir, "slurm-"+id+".out"), "RuntimeError: CUDA error: out of memory\n")
	}
	started := time.Date(2026, 11, 20, 10, 0, 0, 0, time.Local)
	for id, at := range map[string]time.Time{"7": started.AddDate(0, 0, -30), "8": started.Add(-time.Minute)} {
		if err := os.Chtimes(filepath.Join(dir, "slurm-"+id+".out"), at, at); err != nil {
			t.Fatal(err)
		}
	}
	out, err := col.ScanOutputs(ctx, []string{dir}, nil)
	if err != nil || out.Scanned != 1 || out.GPUOOMs != 1 || strings.Join(out.Predating, " ") != "7" {
		t.Fatalf("scan: %+v %v; want job 8's file read (a minute's clock skew), job 7's left", out, err)
	}
	var b strings.Builder
	SummaryOf(SessionReport{Report: Report{Outputs: out}}).Outputs.writeText(&b)
	if !strings.Contains(b.String(), "the output file of job 7 was last written before the job started") {
		t.Errorf("the collect does not say job 7's file was left:\n%s", b.String())
	}
}
