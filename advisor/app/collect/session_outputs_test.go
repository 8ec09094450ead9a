package collect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// asUser makes the collect's user name for a test.
func asUser(t *testing.T, name string) {
	t.Helper()
	was := collectingUser
	collectingUser = func() string { return name }
	t.Cleanup(func() { collectingUser = was })
}

// monitorSummary is a summary as the monitor writes it, of one device
// whose job's processes peaked at peakMiB.
func monitorSummary(job string, peakMiB int) string {
	return fmt.Sprintf(`{"version": 1, "job_id": %q, "samples": 9, "nvml": "ok", "devices": [{
  "name": "NVIDIA A100-SXM4-80GB MIG 1g.10gb", "mig": true, "profile": "1g.10gb", "memory_total_mib": 9728,
  "samples": 9, "peak_used_mib": %d, "peak_process_mib": %d, "process_scope": "tree", "utilization": "unsupported"}]}`,
		job, peakMiB+100, peakMiB)
}

// sacctTime is how sacct writes a time.
const sacctTime = "2006-01-02T15:04:05"

// sessionDump is accounting's record of jobs that started an hour ago and
// ended a minute later: user|id|name|work dir on each line.
func sessionDump(jobs ...string) string {
	start := time.Now().Add(-time.Hour).Format(sacctTime)
	end := time.Now().Add(-59 * time.Minute).Format(sacctTime)
	dump := "JobIDRaw|JobID|User|State|Start|End|ElapsedRaw|JobName|WorkDir|AllocTRES\n"
	for _, j := range jobs {
		f := strings.Split(j, "|")
		dump += strings.Join([]string{f[1], f[1], f[0], "COMPLETED", start, end, "60", f[2], f[3], "gres/gpu:a100_10g=1"}, "|") + "\n"
	}
	return dump
}

// A session's files in its working directory reach the history when its
// output is not found: the monitor's summary in an salloc session's
// directory, the largest of its steps' under srun, an OnDemand app's
// output.log (its OOM and the monitor's line). Names that are not the
// job's, a link, another app's output.log are not read.
func TestScanOutputsReadsSessionFilesInWorkDir(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	asUser(t, "alice")
	root := t.TempDir()
	dir := func(name string) string { return filepath.Join(root, name) }
	jobs := []string{
		"alice|10|interactive|" + dir("salloc"),
		"alice|11|bash|" + dir("srun"),
		"alice|12|sys/dashboard/sys/jupyter|" + dir("ood"),
		"alice|13|sys/dashboard/sys/jupyter|" + dir("oodlink"),
		"alice|14|notebook|" + dir("notood"),
		"alice|15|interactive|" + dir("summarylink"),
		"alice|16|interactive|" + dir("big"),
		"bob|17|interactive|" + dir("bob"),
	}
	if _, err := col.ImportDump(ctx, strings.NewReader(sessionDump(jobs...))); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir("salloc"), "migadvisor-10.json"), monitorSummary("10", 3100))
	write(t, filepath.Join(dir("srun"), "migadvisor-11.0.json"), monitorSummary("11", 2000))
	write(t, filepath.Join(dir("srun"), "migadvisor-11.1.2.json"), monitorSummary("11", 4000))
	write(t, filepath.Join(dir("srun"), "migadvisor-110.json"), monitorSummary("110", 9000)) // another job's
	write(t, filepath.Join(dir("srun"), "migadvisor-11.x.json"), monitorSummary("11", 9000)) // no step's
	write(t, filepath.Join(dir("ood"), "output.log"), "[I ServerApp] Jupyter Server is running\n"+
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"+
		"MIGADVISOR_GPU peak_mib=2970 used_peak_mib=3390 total_mib=81559 samples=40 scope=tree util=mean:2,max:35 device=NVIDIA A100-SXM4-80GB\n")
	elsewhere := filepath.Join(root, "elsewhere.log")
	write(t, elsewhere, "MIGADVISOR_GPU peak_mib=7000 total_mib=81559 samples=4 scope=tree util=unsupported device=A100\n")
	write(t, filepath.Join(dir("oodlink"), "x"), "")
	if err := os.Symlink(elsewhere, filepath.Join(dir("oodlink"), "output.log")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir("notood"), "output.log"), "MIGADVISOR_GPU peak_mib=7000 total_mib=81559 samples=4 device=A100\n")
	write(t, filepath.Join(root, "summary.json"), monitorSummary("15", 7000))
	write(t, filepath.Join(dir("summarylink"), "x"), "")
	if err := os.Symlink(filepath.Join(root, "summary.json"), filepath.Join(dir("summarylink"), "migadvisor-15.json")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir("big"), "migadvisor-16.0.json"), monitorSummary("16", 1000)+strings.Repeat(" ", maxSummaryBytes))
	write(t, filepath.Join(dir("bob"), "migadvisor-17.json"), monitorSummary("17", 1000))

	out, err := col.ScanOutputs(ctx, nil, nil)
	if err != nil || out.Scanned != 4 || out.GPUMemory != 3 || out.GPUOOMs != 1 || len(out.Missing) != 0 {
		t.Fatalf("scan: %+v %v", out, err)
	}
	if len(out.Unread) != 1 || !strings.Contains(out.Unread[0], "migadvisor-16.0.json: larger than") {
		t.Errorf("unread: %q", out.Unread)
	}
	recs, err := col.Store.History(ctx, history.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range recs {
		if r.OutputPath == "" {
			continue
		}
		peak := "-"
		if p := r.GPUMemPeakMiB(); p != nil {
			peak = fmt.Sprintf("%v %s", *p, r.MonitorSource)
		}
		got[r.JobID] = fmt.Sprintf("%s %s oom=%v", filepath.Base(r.OutputPath), peak, r.GPUOOM != "")
	}
	want := map[string]string{
		"10": "migadvisor-10.json 3100 summary oom=false",
		"11": "migadvisor-11.0.json 4000 summary oom=false", // the first stands for them all
		"12": "output.log 2970 line oom=true",
		"16": "migadvisor-16.0.json - oom=false",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("recorded:\n got %v\nwant %v", got, want)
	}

	again, err := col.ScanOutputs(ctx, nil, nil)
	if err != nil || again.Scanned != 0 || again.Unchanged != 4 {
		t.Errorf("a second scan re-read unchanged files: %+v %v", again, err)
	}
	time.Sleep(10 * time.Millisecond)
	write(t, filepath.Join(dir("srun"), "migadvisor-11.2.json"), monitorSummary("11", 5000))
	if third, _ := col.ScanOutputs(ctx, nil, nil); third.Scanned != 1 {
		t.Errorf("a new step's summary was not read: %+v", third)
	}
}

// Without --outputs, a collect looks at the collecting user's sessions
// that ended within sessionLookback, besides the tracked jobs: not older
// ones, not other users', and none when the user is unknown. With
// --outputs every job is looked at, and a working directory only for the
// user's own or a tracked job.
func TestScanOutputsLooksAtOwnRecentSessions(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	old := time.Now().Add(-sessionLookback - 24*time.Hour)
	dump := sessionDump("alice|20|interactive|"+filepath.Join(root, "a"), "bob|21|interactive|"+filepath.Join(root, "b")) +
		strings.Join([]string{"22", "22", "alice", "COMPLETED", old.Format(sacctTime),
			old.Add(time.Minute).Format(sacctTime), "60", "interactive", filepath.Join(root, "c"), "gres/gpu:a100_10g=1"},
			"|") + "\n"
	for _, id := range []string{"20", "21", "22"} {
		write(t, filepath.Join(root, map[string]string{"20": "a", "21": "b", "22": "c"}[id], "migadvisor-"+id+".json"), monitorSummary(id, 1000))
	}
	for _, tc := range []struct {
		user     string
		outputs  []string
		want     int
		siteWide bool
	}{
		{"alice", nil, 0, true},                          // a site-wide collect looks for no one's sessions
		{"alice", nil, 1, false},                         // 20: not bob's 21, not the old 22
		{"bob", nil, 1, false},                           // 21
		{"", nil, 0, false},                              // no user: no session
		{"alice", []string{t.TempDir()}, 2, false},       // 20 and the old 22
		{"carol", []string{t.TempDir()}, 0, false},       // nobody's own
		{"bob", []string{filepath.Join(root)}, 1, false}, // 21
	} {
		col := testCollector(t)
		col.SiteWide = tc.siteWide
		asUser(t, tc.user)
		if _, err := col.ImportDump(ctx, strings.NewReader(dump)); err != nil {
			t.Fatal(err)
		}
		out, err := col.ScanOutputs(ctx, tc.outputs, nil)
		if err != nil || out.Scanned != tc.want || out.GPUMemory != tc.want {
			t.Errorf("user %q, outputs %v: %+v %v, want %d scanned", tc.user, tc.outputs, out, err, tc.want)
		}
	}
}

// A job linked to a script whose output is not found is read from the
// monitor's summary in its working directory (its stdout went elsewhere),
// whoever collects, and is not counted missing.
func TestScanOutputsReadsTrackedJobSummaryInWorkDir(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	asUser(t, "root")
	work := t.TempDir()
	if _, err := col.ImportDump(ctx, strings.NewReader(sessionDump("alice|30|train|"+work))); err != nil {
		t.Fatal(err)
	}
	if err := col.Store.RecordSubmissions(ctx, []history.Submission{{Cluster: "c1", JobID: "30", Fingerprint: "f",
		Source: "/nowhere/job.sh", Script: "/nowhere/job.sh", Stdout: "/nonexistent/30.out", Submitted: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(work, "migadvisor-30.json"), monitorSummary("30", 2500))
	out, err := col.ScanOutputs(ctx, nil, nil)
	if err != nil || out.Scanned != 1 || out.GPUMemory != 1 || len(out.Missing) != 0 {
		t.Fatalf("scan: %+v %v", out, err)
	}
}

func TestIsStepName(t *testing.T) {
	for name, want := range map[string]bool{"0": true, "12": true, "3.1": true, "": false, "x": false, "3.": false, ".1": false,
		"3.1.2": false, "batch": false} {
		if got := isStepName(name); got != want {
			t.Errorf("isStepName(%q) = %v", name, got)
		}
	}
}
