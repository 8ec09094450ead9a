package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// status right after a submission through the shim, before slurmdbd has
// its job, says one thing: the job is on its way, not "no tracked jobs"
// beside "1 submission not in accounting yet".
func TestStatusRightAfterAShimSubmissionSaysOneThing(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	st, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	err = st.RecordSubmissions(context.Background(), []history.Submission{{Fingerprint: "fp", Source: dir + "/job.sh", Script: dir + "/job.sh",
		WorkDir: dir, JobName: "job.sh", User: currentUserName(), Submitted: time.Now(), Token: "t"}})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.psv")
	os.WriteFile(empty, []byte("JobIDRaw|JobID|User|State|ExitCode|Submit|ElapsedRaw|WorkDir|JobName\n"), 0o644)
	fake := slurmFromDump(t, empty)
	out, errOut, code := migadvisorWith(t, fake, "status")
	want := "no tracked jobs to list yet: 1 submission through the sbatch wrapper not in Slurm's accounting yet; run 'migadvisor status' again in a minute\n"
	if code != 0 || out != want || strings.Contains(errOut, "not in Slurm's accounting") {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
}

// status of a job submitted through the wrapper (its record, with its id,
// still in the spool) lists it, and leaves the spool and the history as
// they were: a read moves nothing in; the next collect does.
func TestStatusListsASpooledSubmissionAndMovesNothing(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	mustRunCLI(t, "collect", "--sacct-file", devclusterDump, "--cluster", "migdev")
	file, err := history.SpoolFor(db).Put(history.Submission{JobID: "777777", Fingerprint: "fp", Source: dir + "/job.sh", Script: dir + "/job.sh",
		WorkDir: dir, Submitted: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(db)
	empty := filepath.Join(dir, "empty.psv")
	os.WriteFile(empty, []byte("JobIDRaw|JobID|User|State|ExitCode|Submit|ElapsedRaw|WorkDir|JobName\n"), 0o644)
	out, errOut, code := migadvisorWith(t, slurmFromDump(t, empty), "status", "777777")
	if code != 0 || !strings.Contains(out, "777777") || !strings.Contains(out, "job.sh") {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("status moved the spooled record: %v", err)
	}
	if after, _ := os.ReadFile(db); string(after) != string(before) {
		t.Error("status wrote to the history")
	}
	if left, _ := filepath.Glob(db + "-*"); len(left) > 0 {
		t.Errorf("left beside the history: %v", left)
	}
}
