package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/app/joblist"
	"github.com/migadvisor/migadvisor/slurm"
)

// hostile is text a shell would act on if it ever evaluated it: each
// $(...) and `...` would create a file named PWNED*.
const hostile = `it's "q" $(touch PWNED1) ` + "`touch PWNED2`" + ` ☃ \ $HOME`

// TestHostileNamesAreNeverEvaluated runs a script whose directory, file
// name, job name and arguments hold quotes, $(), backticks, unicode and a
// 100 kB line through sweep (its variants then run by bash under the
// monitor, from a migadvisor whose own path is as odd), lint, su, recommend
// and the sbatch wrapper. Every name comes back as it was, the variants run
// the user's command with its argument intact, and no shell ever evaluates
// the text: no PWNED file appears.
func TestHostileNamesAreNeverEvaluated(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	db := filepath.Join(root, "state "+hostile, "history ?x=1#% ☃.db") // SQLite reads a path as a URI
	t.Setenv("MIGADVISOR_DB", db)
	dir := filepath.Join(root, hostile)
	binDir := filepath.Join(root, "bin "+hostile)
	for _, d := range []string{dir, binDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(binDir, "migadvisor")
	copyFile(t, migadvisorBinary(t), bin)
	script := filepath.Join(dir, "job "+hostile+".sh")
	jobName := "n " + hostile
	body := "#!/bin/bash\n#SBATCH -J " + slurm.QuoteValue(jobName) + "\n#SBATCH --gres=gpu:a100:1\n#SBATCH -t 10\n" +
		"# " + strings.Repeat("long line ", 10_000) + "\n" + `printf 'ran: %s\n' "$1"` + "\n"
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		return runProcess(t, cmd)
	}

	sweepDir := filepath.Join(dir, "sweep "+hostile)
	if out, errOut, code := run("sweep", script, "--out", sweepDir, "--json"); code != 0 {
		t.Fatalf("sweep: exit %d\n%s%s", code, out, errOut)
	}
	var variants []string // not Glob: the directory's name holds a backslash
	entries, _ := os.ReadDir(sweepDir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sh") {
			variants = append(variants, filepath.Join(sweepDir, e.Name()))
		}
	}
	if len(variants) != 4 {
		t.Fatalf("%d variants", len(variants))
	}
	arg := "arg " + hostile
	for _, v := range variants {
		data, _ := os.ReadFile(v)
		if name := slurm.Parse(v, data).Resources.JobName; !strings.HasPrefix(name, jobName+"-") {
			t.Errorf("%s: job name %q, want %q and the profile", filepath.Base(v), name, jobName)
		}
		cmd := exec.Command("bash", v, arg)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output() // the monitor finds no GPU here, says so, and runs the job
		if err != nil || string(out) != "ran: "+arg+"\n" || !strings.Contains(stderr.String(), "migadvisor monitor:") {
			t.Errorf("bash %s: %v, output %q, stderr %q", filepath.Base(v), err, out, stderr.String())
		}
	}
	for _, args := range [][]string{{"lint", script}, {"su", script}, {"recommend", script, "--json"}} {
		out, errOut, code := run(args...)
		if code != 0 && code != 1 || strings.Contains(errOut, "panic") {
			t.Errorf("%s: exit %d\n%s%s", args[0], code, out, errOut)
		}
		if args[0] == "recommend" && !json.Valid([]byte(out)) {
			t.Errorf("recommend --json: %q", out)
		}
	}
	sbatch := sbatchOnPath(t)
	if _, errOut, code := run("sbatch", "-J", jobName, script, arg); code != 0 {
		t.Errorf("sbatch wrapper: exit %d: %s", code, errOut)
	}
	if logged := sbatch.args(t); logged != strings.Join([]string{"-J", jobName, script, arg}, "\n")+"\n" {
		t.Errorf("sbatch got:\n%s", logged)
	}
	if out, errOut, code := run("history", "--json"); code != 0 || out != "[]\n" {
		t.Errorf("history at %q: exit %d\n%s%s", db, code, out, errOut)
	}
	if tr := trackedJobs(t, db); len(tr) != 1 || tr[0].JobID != "4242" || tr[0].Script != script {
		t.Errorf("the wrapper's record in a history at %q: %+v", db, tr)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("the history is not where it was asked to be: %v", err)
	}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "PWNED") {
			t.Errorf("a shell evaluated user text: %s exists", path)
		}
		return nil
	})
}

// runProcess runs cmd and returns its output and exit status; a command
// that cannot start fails the test.
func runProcess(t *testing.T, cmd *exec.Cmd) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestCollectReadsA10GBOutput: a job whose output grew to 10 GB (sparse
// here) is read at its first and last 32 MiB only, and what it says there
// (the OOM at its end, a metric at its start) reaches the history.
func TestCollectReadsA10GBOutput(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	dir := t.TempDir()
	dump := filepath.Join(dir, "dump.psv")
	os.WriteFile(dump, []byte("JobIDRaw|JobID|State|ElapsedRaw|AllocTRES|JobName\n7|7|FAILED|600|cpu=1,mem=4G,gres/gpu:a100_10g=1|train\n"), 0o644)
	out := filepath.Join(dir, "slurm-7.out")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	const size = 10 << 30
	tail := "\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 9.50 GiB of which 1.00 GiB is free. Including non-PyTorch memory, this process has 8.40 GiB memory in use.\n"
	if _, err := f.WriteString("MIGADVISOR_METRIC first_loss 2.5\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(tail), size-int64(len(tail))); err != nil {
		t.Fatalf("a sparse 10 GB file: %v", err)
	}
	f.Close()
	stdout, errOut, code := migadvisor(t, "collect", "--sacct-file", dump, "--outputs", dir, "--json")
	var rep collect.Summary
	if err := json.Unmarshal([]byte(stdout), &rep); code != 0 || err != nil {
		t.Fatalf("collect: exit %d, %v\n%s", code, err, errOut)
	}
	if rep.Outputs.Scanned != 1 || rep.Outputs.GPUOOMs != 1 || len(rep.Outputs.Capped) != 1 || rep.Outputs.Capped[0] != out {
		t.Fatalf("outputs: %+v", rep.Outputs)
	}
	stdout, _, _ = migadvisor(t, "history", "--json")
	var hist []joblist.JobEntry
	if err := json.Unmarshal([]byte(stdout), &hist); err != nil || len(hist) != 1 {
		t.Fatalf("history: %v %s", err, stdout)
	}
	h := hist[0]
	if h.OOM == nil || *h.OOM != "gpu" || h.GPUNeedMiB == nil || *h.GPUNeedMiB != 8.4*1024+2048 || h.Metrics["first_loss"] != 2.5 {
		t.Errorf("history: oom %v need %v metrics %v", h.OOM, h.GPUNeedMiB, h.Metrics)
	}
}
