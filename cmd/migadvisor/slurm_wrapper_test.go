//go:build slurm

// The sbatch wrapper and its shim on the dev cluster's real Slurm: advice
// at submission, and the record collect links to the job.

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/joblist"
)

// uniqueRun gives a script a fingerprint of its own, so that the runs of
// earlier tests on the same cluster are not its runs.
func uniqueRun(script string) string {
	return script + fmt.Sprintf("echo run %d\n", time.Now().UnixNano())
}

// The wrapper installed as sbatch (a link first on PATH): the first
// submission passes through silently and lands in Slurm and in the history;
// once collect has its run, a submission is advised a slice; with
// --mig-apply the job Slurm gets asks for that slice.
func TestSlurmSbatchWrapper(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(work, "history.db"))
	t.Chdir(work)
	bin := filepath.Join(work, "bin")
	os.Mkdir(bin, 0o755)
	if err := os.Symlink(migadvisorBinary(t), filepath.Join(bin, "sbatch")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	job := writeScript(t, work, "wrapped.sh", uniqueRun(wrappedScript))
	sbatch := func(args ...string) (id, stderr string) {
		t.Helper()
		cmd := exec.Command("sbatch", append([]string{"--parsable"}, args...)...)
		var errOut strings.Builder
		cmd.Stderr = &errOut
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("sbatch %v: %v\n%s", args, err, errOut.String())
		}
		id = strings.TrimSpace(string(out))
		t.Cleanup(func() { exec.Command("scancel", id).Run() })
		return id, errOut.String()
	}

	first, errOut := sbatch(job)
	if errOut != "" {
		t.Errorf("first submission, no history: stderr %q", errOut)
	}
	mustRun(t, "wait", first, "--timeout", "1m")
	mustRun(t, "collect")
	var hist []joblist.JobEntry
	if err := json.Unmarshal([]byte(mustRun(t, "history", job, "--json")), &hist); err != nil || len(hist) != 1 {
		t.Fatalf("history: %v %s", err, dump(hist))
	}
	checkJob(t, hist[0], "full", "COMPLETED", 0, 0)

	_, advice := sbatch(job)
	const prefix = "migadvisor: this script allocated at most 1.5 GiB of GPU memory in 1 run on a full A100; "
	use := regexp.MustCompile(`Next time, submit with --gres=(gpu:a100_\d+g:1), or with --mig-apply \(or MIGADVISOR_APPLY=1\) to have it changed for you\.\n` +
		`migadvisor: to have job \d+ changed now, cancel it while it waits \(scancel \d+\) and submit it again with --gres=gpu:a100_\d+g:1\.\n$`).FindStringSubmatch(advice)
	if !strings.HasPrefix(advice, prefix) || !strings.Contains(advice, "would cost") || use == nil {
		t.Fatalf("advice: %q", advice)
	}
	applied, applyErr := sbatch("--mig-apply", job)
	if !strings.Contains(applyErr, "--gres=gpu:a100:1 -> --gres="+use[1]) {
		t.Errorf("--mig-apply: %q", applyErr)
	}
	out, err := exec.Command("scontrol", "show", "job", applied).Output()
	if err != nil || !strings.Contains(string(out), use[1]) {
		t.Errorf("the applied job asks for %s? %v\n%s", use[1], err, out)
	}
	var tracked []struct {
		JobID string `json:"job_id"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "status", "--json")), &tracked); err != nil || len(tracked) != 3 {
		t.Errorf("status: %v %s", err, dump(tracked))
	}
}

// installShim installs the sbatch shim as make install does, in work's
// libexec beside migadvisor-sbatch, first on PATH.
func installShim(t *testing.T, work string) {
	t.Helper()
	libexec := filepath.Join(work, "libexec")
	os.Mkdir(libexec, 0o755)
	shim, _ := os.ReadFile(filepath.Join(packageDir, "../../scripts/sbatch"))
	os.WriteFile(filepath.Join(libexec, "sbatch"), shim, 0o755)
	if err := os.Symlink(sbatchBinary(t), filepath.Join(libexec, "migadvisor-sbatch")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", libexec+":"+os.Getenv("PATH"))
}

// The shim as installed on a login node: Slurm's real sbatch runs in its
// place, the wrapper beside it prints the advice and records the submission
// without the id; status, wait and collect with no ids find the job in
// accounting and link it to its script, so its history has the run.
func TestSlurmShimBesideSbatch(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(work, "history.db"))
	t.Chdir(work)
	installShim(t, work)
	job := writeScript(t, work, "beside.sh", uniqueRun(wrappedScript))
	cmd := exec.Command("sbatch", "--parsable", job)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sbatch: %v\n%s", err, errOut.String())
	}
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("scancel", id).Run() })
	if _, err := strconv.Atoi(id); err != nil || errOut.String() != "" {
		t.Fatalf("sbatch --parsable printed %q, stderr %q", out, errOut.String())
	}
	// wait, status and collect, with no ids, find the job the shim
	// submitted (wait gives slurmdbd a few seconds to have it; a job that
	// ended meanwhile is no job to wait for).
	mustRun(t, "wait", "--timeout", "1m")
	mustRun(t, "collect")
	var tracked []struct {
		JobID string `json:"job_id"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "status", "--json")), &tracked); err != nil || len(tracked) != 1 || tracked[0].JobID != id {
		t.Errorf("status: %v %s", err, dump(tracked))
	}
	var hist []joblist.JobEntry
	if err := json.Unmarshal([]byte(mustRun(t, "history", job, "--json")), &hist); err != nil || len(hist) != 1 || hist[0].JobID != id {
		t.Fatalf("history of %s (job %s): %v %s", job, id, err, dump(hist))
	}
	checkJob(t, hist[0], "full", "COMPLETED", 0, 0)
}
