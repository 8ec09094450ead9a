package outcome

import (
	"testing"

	"github.com/migadvisor/migadvisor/catalog/catalogtest"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }

// Outcomes the dev cluster cannot produce, written as the history holds them.
func TestExplainWrittenOutcomes(t *testing.T) {
	site := catalogtest.Wulver(t)
	cases := []struct {
		name string
		rec  history.JobRecord
		kind string
		text string
	}{
		{"node failure", history.JobRecord{State: "NODE_FAIL", NodeList: "n0042", ElapsedS: i64(3600), ExitCode: i64(0), ExitSignal: i64(0)},
			NodeFailure, "lost its node n0042 after 01:00:00 (NODE_FAIL): resubmit it; the run says nothing about the script or the profile"},
		{"preempted", history.JobRecord{State: "PREEMPTED", ElapsedS: i64(90)},
			Preempted, "was preempted by another job after 00:01:30: resubmit it; the run says nothing about the script or the profile"},
		{"killed by a signal", history.JobRecord{State: "FAILED", ExitCode: i64(0), ExitSignal: i64(9), ElapsedS: i64(5)},
			Failed, "was killed by signal 9 (SIGKILL) after 00:00:05"},
		{"segfault through the shell", history.JobRecord{State: "FAILED", ExitCode: i64(139), ExitSignal: i64(0), OutputPath: "/w/train-7.out"},
			Failed, "failed with exit code 139: a process was killed by signal 11 (SIGSEGV); train-7.out may say why"},
		{"not executable", history.JobRecord{State: "FAILED", ExitCode: i64(126), ExitSignal: i64(0)},
			Failed, "failed with exit code 126: a command was found but could not be run, so check that it is executable and built for this node"},
		{"GPU OOM on the largest profile", history.JobRecord{State: "FAILED", Profile: "full", GPUOOM: "pytorch", GPUNeedMiB: f64(90 * 1024)},
			GPUOOM, "ran out of GPU memory on a full A100, which has 79.3 GiB usable; it needed at least 90.0 GiB: no profile of wulver has more, so the job must use less, for example a smaller batch"},
		{"GPU OOM, only the monitor's peak", history.JobRecord{State: "FAILED", Profile: "2g.20gb", GPUOOM: "cuda", MonitorPeakMiB: f64(19.4 * 1024)},
			GPUOOM, "ran out of GPU memory on 2g.20gb, which has 19.5 GiB usable; it needed more than that: try 3g.40gb, with 39.5 GiB"},
		{"GPU OOM that needs more than the next profile", history.JobRecord{State: "FAILED", Profile: "1g.10gb", GPUOOM: "pytorch", GPUNeedMiB: f64(25 * 1024)},
			GPUOOM, "ran out of GPU memory on 1g.10gb, which has 9.5 GiB usable; it needed at least 25.0 GiB: try 3g.40gb, with 39.5 GiB"},
		{"GPU OOM whose need would fill the next profile", history.JobRecord{State: "FAILED", Profile: "1g.10gb", GPUOOM: "pytorch", GPUNeedMiB: f64(19 * 1024)},
			GPUOOM, "ran out of GPU memory on 1g.10gb, which has 9.5 GiB usable; it needed at least 19.0 GiB: try 3g.40gb, with 39.5 GiB"},
		{"GPU OOM below the usable memory", history.JobRecord{State: "FAILED", Profile: "1g.10gb", GPUOOM: "pytorch-mig-assert", MonitorPeakMiB: f64(6000)},
			GPUOOM, "ran out of GPU memory on 1g.10gb, which has 9.5 GiB usable; it needed more than that: try 2g.20gb, with 19.5 GiB"},
		{"GPU OOM caught by the script", history.JobRecord{State: "COMPLETED", ExitCode: i64(0), GPUOOM: "pytorch"},
			GPUOOM, "ran out of GPU memory: ask for a GPU with more memory or use less"},
		{"host OOM in a job that went on", history.JobRecord{State: "COMPLETED", HostOOM: true, ReqMemMiB: f64(4096), MaxRSSMiB: f64(4000)},
			HostOOM, "completed, but a process of it was killed for host memory: the job had 4.0 GiB and sacct saw its RSS reach 3.9 GiB before the kill; ask for more with --mem, as a larger GPU profile would not help"},
		{"time limit without a limit on record", history.JobRecord{State: "TIMEOUT"},
			TimeLimit, "reached its time limit: ask for more with --time, or try a larger profile, which may be faster"},
		{"time limit on the whole GPU, which nothing is larger than", history.JobRecord{State: "TIMEOUT", Profile: "full", ElapsedS: i64(603), TimeLimitMin: i64(10)},
			TimeLimit, "reached its time limit of 00:10:00 after 00:10:03, so it needs at least that long: ask for more with --time"},
		{"time limit on a slice", history.JobRecord{State: "TIMEOUT", Profile: "2g.20gb"},
			TimeLimit, "reached its time limit: ask for more with --time, or try a larger profile, which may be faster"},
		{"no output file, path known", history.JobRecord{State: "FAILED", ExitCode: i64(0), ExitSignal: i64(53), Stdout: "/nonexistent/dir/9.out"},
			NoOutputFile, "failed at once because Slurm could not open /nonexistent/dir/9.out (exit 0:53): does the directory of --output or --error exist? 'migadvisor lint' checks a script's before you submit, the sbatch wrapper the command line's too"},
		{"still running", history.JobRecord{State: "RUNNING"}, "", ""},
		{"placeholder record", history.JobRecord{State: "COMPLETED", Stub: true}, "", ""},
	}
	for _, c := range cases {
		got := Of(&c.rec, site)
		if got.Kind != c.kind || got.Text != c.text {
			t.Errorf("%s:\n got %q %q\nwant %q %q", c.name, got.Kind, got.Text, c.kind, c.text)
		}
	}
	// Without a site, the figures of the run itself.
	r := history.JobRecord{State: "FAILED", Profile: "1g.10gb", GPUOOM: "pytorch", GPUNeedMiB: f64(12.3 * 1024)}
	if got := Of(&r, nil).Text; got != "ran out of GPU memory on 1g.10gb; it needed at least 12.3 GiB: ask for a GPU with more memory or use less" {
		t.Errorf("no site: %q", got)
	}
}
