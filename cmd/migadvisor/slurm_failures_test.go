//go:build slurm

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// failuresScript fails a different way on each profile of a sweep.
const failuresScript = `#!/bin/bash
#SBATCH --job-name=failures
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --mem=200M
#SBATCH --time=00:05:00
#SBATCH --output=%x.%j.out
case "$SLURM_JOB_NAME" in
*-1g.10gb)
	echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 9.50 GiB of which 1.20 GiB is free. Including non-PyTorch memory, this process has 8.30 GiB memory in use. Of the allocated memory 7.90 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated." >&2
	exit 1 ;;
*-2g.20gb)
	trainer --epochs 2 ;;
*-3g.40gb)
	perl -e 'my @a; for (1..60) { push @a, "x" x (8*1024*1024); select(undef, undef, undef, 0.2) }'
	echo "still here" ;;
*)
	echo done ;;
esac
`

const noOutputDirScript = `#!/bin/bash
#SBATCH --job-name=nodir
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --mem=64M
#SBATCH --time=00:02:00
#SBATCH --output=/nonexistent/dir/%j.out
echo hello
`

// wait explains each job of real failures on the dev cluster: a GPU OOM
// and the memory it needed, a command not found, a host OOM, an output
// directory that does not exist (0:53) and a time limit.
func TestSlurmWaitExplainsFailures(t *testing.T) {
	work := slurmWorkDir(t)
	slow := writeScript(t, work, "slow.sh", timeoutScript)
	mustRun(t, "sweep", slow, "--out", "slow", "--profiles", "1g.10gb", "--submit")
	mustRun(t, "sweep", writeScript(t, work, "failures.sh", failuresScript), "--out", "sweep", "--submit")
	// --force: lint may warn about the missing directory; this job is to show what sacct says.
	mustRun(t, "sweep", writeScript(t, work, "nodir.sh", noOutputDirScript), "--out", "nodir", "--profiles", "1g.10gb", "--submit", "--force")

	out := mustRun(t, "wait", "--timeout", "4m")
	t.Logf("wait:\n%s", out)
	want := map[string]string{
		"1g.10gb": "ran out of GPU memory on 1g.10gb, which has 9.5 GiB usable; it needed at least 10.3 GiB: try 2g.20gb, with 19.5 GiB",
		"2g.20gb": "failed because a command was not found (exit 127): failures-2g.20gb.",
		"3g.40gb": "ran out of host memory: the job had 200 MiB",
		"full":    "-",
		"nodir":   "failed at once because Slurm could not open /nonexistent/dir/",
		"slow":    "reached its time limit of 00:01:00 after 00:01:",
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[0], "JOB ID") || !strings.HasSuffix(lines[0], "WHY") {
		t.Fatalf("wait printed %d lines, want a header and 6 jobs", len(lines))
	}
	var rows []jobStatus
	if err := json.Unmarshal([]byte(mustRun(t, "status", "--all", "--json")), &rows); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{"1g.10gb": "GPU OOM", "2g.20gb": "command not found", "3g.40gb": "host OOM", "full": "completed",
		"nodir": "no output file", "slow": "time limit"}
	for _, r := range rows {
		name := r.Profile
		if dir := filepath.Base(r.SweepDir); dir != "sweep" {
			name = dir
		}
		var line string
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, r.JobID+" ") {
				line = l
			}
		}
		if !strings.Contains(line, "  "+want[name]) || r.Outcome != kinds[name] {
			t.Errorf("%s, job %s: %q, outcome %q\nwant %q, %q", name, r.JobID, line, r.Outcome, want[name], kinds[name])
		}
	}
}
