package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// recommend --probe says, off a terminal too and before its first job,
// what it submits, the most that can cost (a whole A100 included) and
// where the files go; an sbatch that refuses the first variant leaves no
// variant directory behind, and the error says so.
func TestProbeSaysItsCostAndCleansUpARefusedSubmission(t *testing.T) {
	isolate(t)
	work := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(work, "history.db"))
	fake := slurmtest.New().Cluster("migdev").Prints("squeue", "").
		Fails("sbatch", "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified\n", 1)
	t.Chdir(work)
	script := writeTestScript(t, work, "train.sh", "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --mem=4G\n#SBATCH --time=02:00:00\n#SBATCH --output=%x-%j.out\npython3 train.py\n")
	_, errOut, code := migadvisorWith(t, fake, "recommend", "--probe", "--no-monitor", "--out", "probe", script)
	want := "migadvisor: probe: submitting 4 jobs, one on each of 1g.10gb, 2g.20gb, 3g.40gb and full (a whole GPU); " +
		"at most 68 SU if every job runs for all of 02:00:00, each job's --time; variants in probe, each job's output in " + work + "/%x-%j.out"
	if code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant\n%s", code, errOut, want)
	}
	if !strings.Contains(errOut, "Invalid account or account/partition combination specified; nothing was submitted, and the variants written for it were removed") {
		t.Errorf("the refusal:\n%s", errOut)
	}
	if _, err := os.Stat(filepath.Join(work, "probe")); !os.IsNotExist(err) {
		t.Errorf("a refused probe left its directory: %v", err)
	}
	if n := len(fake.Calls("sbatch")); n != 1 {
		t.Errorf("sbatch ran %d times after it refused the first variant, want once", n)
	}
}
