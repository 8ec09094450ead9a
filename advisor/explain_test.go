package advisor

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/history"
)

// devRecords imports a dump of the dev cluster and scans the job outputs
// captured with it, as collect does, and returns the records by job id.
func devRecords(t *testing.T, dump, outputs string) map[string]*history.JobRecord {
	t.Helper()
	ctx := context.Background()
	col := testCollector(t)
	f, err := os.Open(dump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := col.ImportDump(ctx, f); err != nil {
		t.Fatal(err)
	}
	if _, err := col.ScanOutputs(ctx, []string{outputs}, nil); err != nil {
		t.Fatal(err)
	}
	recs, err := col.Store.History(ctx, history.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*history.JobRecord{}
	for i := range recs {
		byID[recs[i].JobID] = &recs[i]
	}
	return byID
}

// Each way a real job on the dev cluster ended gets its kind and a sentence
// with the figures a user needs (testdata/joboutput/README.md lists the jobs).
func TestExplainDevClusterOutcomes(t *testing.T) {
	site := wulver(t)
	cases := []struct {
		dump, outputs, job string
		kind, text         string
		anyProfile         bool
	}{
		{"devcluster-22.05.psv", "devcluster", "2", OutcomeCompleted, "completed after 00:00:07", false},
		{"devcluster-22.05.psv", "devcluster", "5", OutcomeGPUOOM,
			"ran out of GPU memory on 1g.10gb, which has 9.5 GiB usable; it needed at least 10.3 GiB: try 2g.20gb, with 19.5 GiB", false},
		{"devcluster-22.05.psv", "devcluster", "4", OutcomeHostOOM,
			"ran out of host memory: the job had 50 MiB and sacct saw its RSS reach 41 MiB before the kill; ask for more with --mem, as a larger GPU profile would not help", true},
		{"devcluster-22.05.psv", "devcluster", "3", OutcomeFailed, "failed with exit code 3 after 00:00:07; slurm-3.out may say why", false},
		{"devcluster-22.05.psv", "devcluster", "6", OutcomeTimeLimit,
			"reached its time limit of 00:01:00 after 00:01:19, so it needs at least that long: ask for more with --time, or try a larger profile, which may be faster", false},
		{"devcluster-22.05.psv", "devcluster", "7", OutcomeCancelled,
			"was cancelled by uid 0 after 00:00:10, before it ended: the run says nothing about the profile", true},
		{"devcluster-22.05.psv", "devcluster", "12", OutcomeCancelled, "was cancelled by uid 0 before it started", true},
		{"devcluster-failures.psv", "devcluster-failures", "1", OutcomeCommandNotFound,
			"failed because a command was not found (exit 127): slurm-1.out names it; load its module or fix PATH in the script", true},
		{"devcluster-failures.psv", "devcluster-failures", "2", OutcomeNoOutputFile,
			"failed at once because Slurm could not open its output or error file (exit 0:53): does the directory of --output or --error exist? 'migadvisor lint' checks a script's before you submit, the sbatch wrapper the command line's too", true},
		{"devcluster-failures.psv", "devcluster-failures", "3", OutcomeHostOOM,
			"ran out of host memory: the job had 200 MiB and sacct saw its RSS reach 169 MiB before the kill; ask for more with --mem, as a larger GPU profile would not help", true},
		{"devcluster-failures.psv", "devcluster-failures", "4", OutcomeTimeLimit,
			"reached its time limit of 00:01:00 after 00:01:03, so it needs at least that long: ask for more with --time, or try a larger profile, which may be faster", false},
	}
	loaded := map[string]map[string]*history.JobRecord{}
	for _, c := range cases {
		recs, ok := loaded[c.dump]
		if !ok {
			recs = devRecords(t, "../testdata/sacct/"+c.dump, "../testdata/joboutput/"+c.outputs)
			loaded[c.dump] = recs
		}
		r := recs[c.job]
		if r == nil {
			t.Fatalf("%s: no job %s", c.dump, c.job)
		}
		got := Explain(r, site)
		if got.Kind != c.kind || got.Text != c.text || got.AnyProfile != c.anyProfile {
			t.Errorf("%s job %s (%s %v):\n got %q %q %v\nwant %q %q %v", c.dump, c.job, r.State, derefInt(r.ExitCode),
				got.Kind, got.Text, got.AnyProfile, c.kind, c.text, c.anyProfile)
		}
	}
}

func derefInt(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }

// Outcomes the dev cluster cannot produce, written as the history holds them.
func TestExplainWrittenOutcomes(t *testing.T) {
	site := wulver(t)
	cases := []struct {
		name string
		rec  history.JobRecord
		kind string
		text string
	}{
		{"node failure", history.JobRecord{State: "NODE_FAIL", NodeList: "n0042", ElapsedS: i64(3600), ExitCode: i64(0), ExitSignal: i64(0)},
			OutcomeNodeFailure, "lost its node n0042 after 01:00:00 (NODE_FAIL): resubmit it; the run says nothing about the script or the profile"},
		{"preempted", history.JobRecord{State: "PREEMPTED", ElapsedS: i64(90)},
			OutcomePreempted, "was preempted by another job after 00:01:30: resubmit it; the run says nothing about the script or the profile"},
		{"killed by a signal", history.JobRecord{State: "FAILED", ExitCode: i64(0), ExitSignal: i64(9), ElapsedS: i64(5)},
			OutcomeFailed, "was killed by signal 9 (SIGKILL) after 00:00:05"},
		{"segfault through the shell", history.JobRecord{State: "FAILED", ExitCode: i64(139), ExitSignal: i64(0), OutputPath: "/w/train-7.out"},
			OutcomeFailed, "failed with exit code 139: a process was killed by signal 11 (SIGSEGV); train-7.out may say why"},
		{"not executable", history.JobRecord{State: "FAILED", ExitCode: i64(126), ExitSignal: i64(0)},
			OutcomeFailed, "failed with exit code 126: a command was found but could not be run, so check that it is executable and built for this node"},
		{"GPU OOM on the largest profile", history.JobRecord{State: "FAILED", Profile: "full", GPUOOM: "pytorch", GPUNeedMiB: f64(90 * 1024)},
			OutcomeGPUOOM, "ran out of GPU memory on a full A100, which has 79.3 GiB usable; it needed at least 90.0 GiB: no profile of wulver has more, so the job must use less, for example a smaller batch"},
		{"GPU OOM, only the monitor's peak", history.JobRecord{State: "FAILED", Profile: "2g.20gb", GPUOOM: "cuda", MonitorPeakMiB: f64(19.4 * 1024)},
			OutcomeGPUOOM, "ran out of GPU memory on 2g.20gb, which has 19.5 GiB usable; it needed more than that: try 3g.40gb, with 39.5 GiB"},
		{"GPU OOM that needs more than the next profile", history.JobRecord{State: "FAILED", Profile: "1g.10gb", GPUOOM: "pytorch", GPUNeedMiB: f64(25 * 1024)},
			OutcomeGPUOOM, "ran out of GPU memory on 1g.10gb, which has 9.5 GiB usable; it needed at least 25.0 GiB: try 3g.40gb, with 39.5 GiB"},
		{"GPU OOM whose need would fill the next profile", history.JobRecord{State: "FAILED", Profile: "1g.10gb", GPUOOM: "pytorch", GPUNeedMiB: f64(19 * 1024)},
			OutcomeGPUOOM, "ran out of GPU memory on 1g.10gb, which has 9.5 GiB usable; it needed at least 19.0 GiB: try 3g.40gb, with 39.5 GiB"},
		{"GPU OOM below the usable memory", history.JobRecord{State: "FAILED", Profile: "1g.10gb", GPUOOM: "pytorch-mig-assert", MonitorPeakMiB: f64(6000)},
			OutcomeGPUOOM, "ran out of GPU memory on 1g.10gb, which has 9.5 GiB usable; it needed more than that: try 2g.20gb, with 19.5 GiB"},
		{"GPU OOM caught by the script", history.JobRecord{State: "COMPLETED", ExitCode: i64(0), GPUOOM: "pytorch"},
			OutcomeGPUOOM, "ran out of GPU memory: ask for a GPU with more memory or use less"},
		{"host OOM in a job that went on", history.JobRecord{State: "COMPLETED", HostOOM: true, ReqMemMiB: f64(4096), MaxRSSMiB: f64(4000)},
			OutcomeHostOOM, "completed, but a process of it was killed for host memory: the job had 4.0 GiB and sacct saw its RSS reach 3.9 GiB before the kill; ask for more with --mem, as a larger GPU profile would not help"},
		{"time limit without a limit on record", history.JobRecord{State: "TIMEOUT"},
			OutcomeTimeLimit, "reached its time limit: ask for more with --time, or try a larger profile, which may be faster"},
		{"no output file, path known", history.JobRecord{State: "FAILED", ExitCode: i64(0), ExitSignal: i64(53), Stdout: "/nonexistent/dir/9.out"},
			OutcomeNoOutputFile, "failed at once because Slurm could not open /nonexistent/dir/9.out (exit 0:53): does the directory of --output or --error exist? 'migadvisor lint' checks a script's before you submit, the sbatch wrapper the command line's too"},
		{"still running", history.JobRecord{State: "RUNNING"}, "", ""},
		{"placeholder record", history.JobRecord{State: "COMPLETED", Stub: true}, "", ""},
	}
	for _, c := range cases {
		got := Explain(&c.rec, site)
		if got.Kind != c.kind || got.Text != c.text {
			t.Errorf("%s:\n got %q %q\nwant %q %q", c.name, got.Kind, got.Text, c.kind, c.text)
		}
	}
	// Without a site, the figures of the run itself.
	r := history.JobRecord{State: "FAILED", Profile: "1g.10gb", GPUOOM: "pytorch", GPUNeedMiB: f64(12.3 * 1024)}
	if got := Explain(&r, nil).Text; got != "ran out of GPU memory on 1g.10gb; it needed at least 12.3 GiB: ask for a GPU with more memory or use less" {
		t.Errorf("no site: %q", got)
	}
}

// A sentence is read by people: one line, no doubled punctuation.
func TestExplainSentencesAreOneLine(t *testing.T) {
	recs := devRecords(t, "../testdata/sacct/devcluster-22.05.psv", "../testdata/joboutput/devcluster")
	for id, r := range recs {
		got := Explain(r, wulver(t))
		if strings.ContainsAny(got.Text, "\n\r") || strings.Contains(got.Text, "..") || strings.Contains(got.Text, ";;") ||
			strings.HasSuffix(got.Text, ".") || (got.Kind == "") != (got.Text == "") {
			t.Errorf("job %s: %q %q", id, got.Kind, got.Text)
		}
	}
}
