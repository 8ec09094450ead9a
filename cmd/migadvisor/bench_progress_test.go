package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// benchmark run --quick off a terminal (cron, a pipe) says at once what it
// does and how long it may take, then a line per job submitted and as
// jobs end: not minutes of silence.
func TestBenchmarkRunSaysWhatItDoesOffATerminal(t *testing.T) {
	isolate(t)
	work := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(work, "history.db"))
	counter := filepath.Join(work, "next")
	standInSlurm(t, map[string]string{
		"sbatch":   "#!/bin/sh\nn=$(cat '" + counter + "' 2>/dev/null || echo 500)\necho $((n+1)) > '" + counter + "'\necho \"$n;migdev\"\n",
		"scontrol": "#!/bin/sh\necho 'ClusterName = migdev'\n",
		"squeue":   "#!/bin/sh\nexit 0\n",
		"sacct":    "#!/bin/sh\nexit 0\n",
	})
	t.Chdir(work)
	_, errOut, _ := migadvisor(t, "benchmark", "run", "--quick", "--workloads", "pytorch_mnist_simplecnn", "--profiles", "1g.10gb,full",
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
}
