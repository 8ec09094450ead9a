package collect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// emulationFixture copies the real emulation of testdata/emulate (job
// 1234's, on an H100) into dir/migadvisor-emulate-key.
func emulationFixture(t *testing.T, dir, key string) string {
	t.Helper()
	to := filepath.Join(dir, "migadvisor-emulate-"+key)
	if err := os.CopyFS(to, os.DirFS(filepath.Join("testdata", "emulate", "migadvisor-emulate-1234"))); err != nil {
		t.Fatal(err)
	}
	return to
}

// emulatedOf is each job's emulated runs, by job id.
func emulatedOf(t *testing.T, col *Collector) map[string][]history.EmulatedRun {
	t.Helper()
	recs, err := col.Store.History(context.Background(), history.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]history.EmulatedRun{}
	for _, r := range recs {
		out[r.JobID] = r.Emulated
	}
	return out
}

// A job that ran migadvisor emulate left its runs beside its output (the
// real capture of testdata/emulate): collect records each with the
// evidence of its own output, read as a job's is. The 1g.10gb run ran out
// of memory under its 9728 MiB cap; the others held 14 GiB, a peak around
// 14.5 GiB. The GPU is the monitor's device (this record predates its own
// "gpu" field); the whole GPU ran with all its SMs and no cap.
func TestScanOutputsRecordsTheJobsEmulation(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	job := t.TempDir()
	dump := "JobIDRaw|JobID|State|JobName|WorkDir|AllocTRES\n" +
		"1234|1234|COMPLETED|emu|" + job + "|gres/gpu:a100=1\n" +
		"1235|1235|COMPLETED|plain|" + job + "|gres/gpu:a100=1\n"
	if _, err := col.ImportDump(ctx, strings.NewReader(dump)); err != nil {
		t.Fatal(err)
	}
	emulationFixture(t, job, "1234")
	write(t, filepath.Join(job, "slurm-1234.out"), "PROFILE  SMS  MEMORY CAP  OUTCOME\n")
	write(t, filepath.Join(job, "slurm-1235.out"), "epoch 1\n")
	out, err := col.ScanOutputs(ctx, []string{job}, nil)
	if err != nil || out.Scanned != 2 || out.Emulated != 4 || len(out.Unread) != 0 {
		t.Fatalf("scan: %+v %v", out, err)
	}
	// The runs' OOM and peaks are the emulation's, not the job's.
	if out.GPUOOMs != 0 || out.GPUMemory != 0 {
		t.Errorf("the job's own evidence counts the emulation's: %+v", out)
	}
	runs := emulatedOf(t, col)
	if len(runs["1235"]) != 0 {
		t.Errorf("a job without an emulation has runs: %+v", runs["1235"])
	}
	var got []string
	for _, e := range runs["1234"] {
		peak := "-"
		if p := e.PeakMiB(); p != nil {
			peak = fmt.Sprint(*p)
		}
		got = append(got, fmt.Sprintf("%s %d%% %q %s/%d %.1fs peak %s oom %q on %s", e.Profile, e.Percentage, e.MemLimit,
			e.Outcome, e.ExitStatus, e.Seconds, peak, e.OOM(), e.GPU))
	}
	want := []string{
		`1g.10gb 13% "0=9728M" failed/1 7.7s peak 9558 oom "gpu" on NVIDIA H100 80GB HBM3`,
		`2g.20gb 26% "0=19968M" completed/0 5.3s peak 14488 oom "" on NVIDIA H100 80GB HBM3`,
		`3g.40gb 39% "0=40448M" completed/0 6.1s peak 14548 oom "" on NVIDIA H100 80GB HBM3`,
		`full 100% "" completed/0 5.1s peak 14854 oom "" on NVIDIA H100 80GB HBM3`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("emulated runs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	oom := runs["1234"][0].Evidence.GPUOOM
	if oom == nil || oom.Source != "pytorch" || oom.NeedMiB < 9000 || !strings.Contains(oom.Text, "CUDA out of memory") {
		t.Errorf("1g.10gb's OOM: %+v", oom)
	}
	for _, e := range runs["1234"][1:] {
		if p := *e.PeakMiB(); p < 14000 || p > 15000 || e.Evidence.GPUOOM != nil || e.Evidence.GPUTotalMiB != 81559 {
			t.Errorf("%s: peak %v, OOM %+v, total %v", e.Profile, p, e.Evidence.GPUOOM, e.Evidence.GPUTotalMiB)
		}
	}
	// Unchanged output: neither it nor the emulation is read again, and
	// the runs stay.
	again, err := col.ScanOutputs(ctx, []string{job}, nil)
	if err != nil || again.Unchanged != 2 || again.Emulated != 0 || len(emulatedOf(t, col)["1234"]) != 4 {
		t.Errorf("second scan: %+v %v", again, err)
	}
}

// The emulation is found in the job's working directory when its output
// went elsewhere; the record's own "gpu" names the device, else the
// monitor's summary of the run does, and the summary's figures stand over
// the output's line, as for a job.
func TestScanOutputsFindsTheEmulationInTheWorkDir(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	work := t.TempDir()
	dump := "JobIDRaw|JobID|State|JobName|WorkDir|AllocTRES\n" +
		"41|41|COMPLETED|emu|" + work + "|gres/gpu:a100=1\n" +
		"42|42|COMPLETED|emu|" + work + "|gres/gpu:a100=1\n"
	if _, err := col.ImportDump(ctx, strings.NewReader(dump)); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(t.TempDir(), "logs")
	write(t, filepath.Join(logs, "slurm-41.out"), "done\n")
	write(t, filepath.Join(logs, "slurm-42.out"), "done\n")
	record := func(key, gpu string) {
		write(t, filepath.Join(work, "migadvisor-emulate-"+key, "emulated.json"), `{"version": 1, "site": "wulver", `+gpu+`
  "command": ["python3", "train.py"], "started": "2026-11-24T19:25:44Z", "job_id": "`+key+`",
  "runs": [{"profile": "1g.10gb", "emulated": true, "active_thread_pct": 13, "mem_limit": "0=9728M", "outcome": "budget",
    "exit_status": 143, "seconds": 300.2, "output": "1g.10gb.out", "summary": "1g.10gb.json", "note": ""}]}`)
		write(t, filepath.Join(work, "migadvisor-emulate-"+key, "1g.10gb.out"),
			"MIGADVISOR_GPU peak_mib=100 total_mib=81559 samples=3 scope=tree device=from the line\n")
		write(t, filepath.Join(work, "migadvisor-emulate-"+key, "1g.10gb.json"), `{"version": 1, "job_id": "`+key+`", "devices": [{
  "name": "NVIDIA H100 80GB HBM3", "mig": false, "memory_total_mib": 81559, "samples": 12, "peak_used_mib": 6200,
  "peak_process_mib": 6144, "process_scope": "tree", "utilization": "supported", "util_gpu_mean_pct": 97, "util_gpu_max_pct": 100}]}`)
	}
	record("41", "")
	record("42", `"gpu": "NVIDIA H100 NVL",`)
	out, err := col.ScanOutputs(ctx, []string{logs}, nil)
	if err != nil || out.Scanned != 2 || out.Emulated != 2 || len(out.Unread) != 0 {
		t.Fatalf("scan: %+v %v", out, err)
	}
	got := map[string]string{}
	for id, runs := range emulatedOf(t, col) {
		for _, e := range runs {
			got[id] = fmt.Sprintf("%s %s/%d %v on %s, util %v (%s)", e.Profile, e.Outcome, e.ExitStatus, *e.PeakMiB(), e.GPU,
				e.Evidence.GPUUtilMean, e.Evidence.GPUSource)
		}
	}
	want := map[string]string{
		"41": "1g.10gb budget/143 6144 on NVIDIA H100 80GB HBM3, util 97 (summary)",
		"42": "1g.10gb budget/143 6144 on NVIDIA H100 NVL, util 97 (summary)",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("emulated runs:\n got %v\nwant %v", got, want)
	}
}

// An emulation record this build cannot read (a newer version, not JSON,
// a run's file outside its directory or missing) is reported in one line
// naming the file; the scan goes on, and records what it can.
func TestScanOutputsReportsAnUnreadableEmulation(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	dir := t.TempDir()
	dump := "JobIDRaw|JobID|State|JobName|WorkDir|AllocTRES\n" +
		"51|51|COMPLETED|emu|" + dir + "|gres/gpu:a100=1\n" +
		"52|52|COMPLETED|emu|" + dir + "|gres/gpu:a100=1\n" +
		"53|53|COMPLETED|emu|" + dir + "|gres/gpu:a100=1\n" +
		"54|54|COMPLETED|emu|" + dir + "|gres/gpu:a100=1\n"
	if _, err := col.ImportDump(ctx, strings.NewReader(dump)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"51", "52", "53", "54"} {
		write(t, filepath.Join(dir, "slurm-"+id+".out"), "MIGADVISOR_WORK 10 steps\n")
	}
	write(t, filepath.Join(dir, "migadvisor-emulate-51", "emulated.json"), `{"version": 2, "runs": []}`)
	write(t, filepath.Join(dir, "migadvisor-emulate-52", "emulated.json"), `{"version": 1, "runs": [`)
	write(t, filepath.Join(dir, "migadvisor-emulate-53", "emulated.json"), `{"version": 1, "gpu": "NVIDIA H100 80GB HBM3", "runs": [
  {"profile": "1g.10gb", "emulated": true, "active_thread_pct": 13, "mem_limit": "0=9728M", "outcome": "failed", "exit_status": 127,
   "seconds": 0, "output": "../../etc/passwd"},
  {"profile": "2g.20gb", "emulated": true, "active_thread_pct": 26, "mem_limit": "0=19968M", "outcome": "completed", "exit_status": 0,
   "seconds": 3, "output": "2g.20gb.out"}]}`)
	emulationFixture(t, dir, "54")
	out, err := col.ScanOutputs(ctx, []string{dir}, nil)
	if err != nil || out.Scanned != 4 || out.Work != 4 {
		t.Fatalf("scan: %+v %v", out, err)
	}
	want := []string{
		filepath.Join(dir, "migadvisor-emulate-51", "emulated.json") + ": migadvisor emulate format version 2 is not supported (this migadvisor reads version 1)",
		filepath.Join(dir, "migadvisor-emulate-52", "emulated.json") + ": not a migadvisor emulate file: ",
		filepath.Join(dir, "migadvisor-emulate-53", "emulated.json") + `: the 1g.10gb run: "../../etc/passwd" is not a file of the emulation's directory`,
		filepath.Join(dir, "migadvisor-emulate-53", "emulated.json") + ": the 2g.20gb run: ",
	}
	slices.Sort(out.Unread) // the jobs are scanned newest first
	if len(out.Unread) != len(want) {
		t.Fatalf("unread:\n%s\nwant %d", strings.Join(out.Unread, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(out.Unread[i], w) || strings.Contains(out.Unread[i], "\n") {
			t.Errorf("unread[%d] = %q, want it to start %q", i, out.Unread[i], w)
		}
	}
	// 53's runs are kept without evidence; 54's real one is read whole.
	if out.Emulated != 2+4 {
		t.Errorf("%d emulated runs recorded, want 6", out.Emulated)
	}
	runs := emulatedOf(t, col)
	if len(runs["51"]) != 0 || len(runs["52"]) != 0 || len(runs["53"]) != 2 || len(runs["54"]) != 4 {
		t.Errorf("runs by job: 51 %d, 52 %d, 53 %d, 54 %d", len(runs["51"]), len(runs["52"]), len(runs["53"]), len(runs["54"]))
	}
	if r := runs["53"]; len(r) == 2 && (r[0].PeakMiB() != nil || r[0].OOM() != "" || r[1].Outcome != "completed" || r[1].GPU != "NVIDIA H100 80GB HBM3") {
		t.Errorf("53's runs without evidence: %+v", r)
	}
}

// The emulation's record is written after the job's last line of output:
// a scan in between sees the output alone, and the next scan, the output
// unchanged, still reads the record that has since appeared.
func TestAnEmulationWrittenAfterTheOutputIsRead(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	job := t.TempDir()
	if _, err := col.ImportDump(ctx, strings.NewReader("JobIDRaw|JobID|State|JobName|WorkDir|AllocTRES\n"+
		"1234|1234|RUNNING|emu|"+job+"|gres/gpu:a100=1\n")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(job, "slurm-1234.out"), "migadvisor emulate: full completed in 5 s (exit 0)\n")
	if out, err := col.ScanOutputs(ctx, []string{job}, nil); err != nil || out.Scanned != 1 || out.Emulated != 0 {
		t.Fatalf("before the record: %+v %v", out, err)
	}
	emulationFixture(t, job, "1234")
	if out, err := col.ScanOutputs(ctx, []string{job}, nil); err != nil || out.Emulated != 4 {
		t.Fatalf("after the record: %+v %v", out, err)
	}
	if runs := emulatedOf(t, col); len(runs["1234"]) != 4 {
		t.Errorf("runs: %+v", runs["1234"])
	}
}

// A link or a pipe where an emulation's files should be is not read: a
// pipe would hang collect, a link would read a file outside the job's.
func TestAnEmulationsLinksAndPipesAreNotRead(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	job := t.TempDir()
	if _, err := col.ImportDump(ctx, strings.NewReader("JobIDRaw|JobID|State|JobName|WorkDir|AllocTRES\n"+
		"1234|1234|COMPLETED|emu|"+job+"|gres/gpu:a100=1\n")); err != nil {
		t.Fatal(err)
	}
	dir := emulationFixture(t, job, "1234")
	write(t, filepath.Join(job, "slurm-1234.out"), "done\n")
	os.Remove(filepath.Join(dir, "2g.20gb.out"))
	if err := syscall.Mkfifo(filepath.Join(dir, "2g.20gb.out"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "3g.40gb.out"))
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "3g.40gb.out")); err != nil {
		t.Fatal(err)
	}
	out, err := col.ScanOutputs(ctx, []string{job}, nil)
	if err != nil || !strings.Contains(strings.Join(out.Unread, "\n"), "2g.20gb.out is not a regular file") ||
		!strings.Contains(strings.Join(out.Unread, "\n"), "3g.40gb.out is not a regular file") {
		t.Errorf("%+v %v", out, err)
	}
}

// A job whose output file is not found (written elsewhere, or removed)
// still has its emulation read from its working directory: without it, the
// job's own time (every profile's run together) would pass for a run on the
// whole GPU.
func TestAnEmulationIsReadWithoutTheJobsOutput(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	work := t.TempDir()
	dump := "JobIDRaw|JobID|State|JobName|WorkDir|AllocTRES\n" + "51|51|COMPLETED|emu|" + work + "|gres/gpu:a100=1\n"
	if _, err := col.ImportDump(ctx, strings.NewReader(dump)); err != nil {
		t.Fatal(err)
	}
	emulationFixture(t, work, "51")
	out, err := col.ScanOutputs(ctx, []string{t.TempDir()}, nil)
	if err != nil || out.Emulated != 4 || len(out.Missing) != 0 {
		t.Fatalf("scan: %+v %v", out, err)
	}
	if runs := emulatedOf(t, col)["51"]; len(runs) != 4 || runs[0].Profile != "1g.10gb" {
		t.Errorf("emulated runs: %+v", runs)
	}
}
