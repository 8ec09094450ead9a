package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// benchmark run --quick off a terminal (cron, a pipe) says at once what it
// does and how long it may take, then a line per job submitted and as
// jobs end: not minutes of silence.
func TestBenchmarkRunSaysWhatItDoesOffATerminal(t *testing.T) {
	isolate(t)
	work := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(work, "history.db"))
	fake := slurmtest.New().Cluster("migdev").Prints("squeue", "").Prints("sacct", "")
	fake.On("sbatch", func(slurm.Call) slurmtest.Reply { // jobs 500, 501, ...
		return slurmtest.Reply{Stdout: fmt.Sprintf("%d;migdev\n", 499+len(fake.Calls("sbatch")))}
	})
	t.Chdir(work)
	_, errOut, _ := migadvisorWith(t, fake, "benchmark", "run", "--quick", "--workloads", "pytorch_mnist_simplecnn", "--profiles", "1g.10gb,full",
		"--no-monitor", "--out", "b")
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	want := "benchmark: submitting 2 jobs (1 workload on 1g.10gb and full, quick runs that check the setup) from b, then waits until every job has ended, " +
		"each after its wait in the queue and at most its --time, the longest 00:30:00, and collects them; a line follows each job submitted and each that ends"
	if len(lines) < 4 || lines[0] != want {
		t.Fatalf("stderr:\n%s\nwant first\n%s", errOut, want)
	}
	for _, w := range []string{"benchmark: pytorch_mnist_simplecnn@quick on 1g.10gb submitted as job 500", "benchmark: pytorch_mnist_simplecnn@quick on full submitted as job 501",
		"benchmark: 2 of 2 jobs ended (0 running, 0 pending)"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	sweep := filepath.Join(work, "b", "pytorch_mnist_simplecnn", "sweep")
	var argv []string
	for _, c := range fake.Calls("sbatch") {
		argv = append(argv, strings.Join(c.Args, " "))
	}
	wantArgv := []string{"--parsable " + filepath.Join(sweep, "1g.10gb.sh"), "--parsable " + filepath.Join(sweep, "full.sh")}
	if !slices.Equal(argv, wantArgv) {
		t.Errorf("sbatch ran with\n%q\nwant (jobs 500 and 501)\n%q", argv, wantArgv)
	}
}

// A suite that stops waiting for the jobs it submitted (--timeout, squeue
// failing) says they run on, charged, and how to take them up, as a probe
// does.
func TestBenchmarkRunThatStopsWaitingSaysItsJobsRunOn(t *testing.T) {
	isolate(t)
	work := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(work, "history.db"))
	t.Chdir(work)
	pending := slurmtest.New().Cluster("migdev").Prints("sbatch", "4242;migdev\n").Prints("squeue", "4242|4242|PENDING|gres/gpu:a100_10g:1|None\n")
	_, errOut, code := migadvisorWith(t, pending, "benchmark", "run", "--quick", "--workloads", "pytorch_mnist_simplecnn", "--profiles", "1g.10gb",
		"--no-monitor", "--out", "b", "--timeout", "1ms")
	for _, want := range []string{"1 job, submitted, still run", "charged", "'migadvisor wait'"} {
		if code != exitFailure || !strings.Contains(errOut, want) {
			t.Errorf("exit %d, stderr lacks %q:\n%s", code, want, errOut)
		}
	}
}
