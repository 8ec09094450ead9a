package collect

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

const (
	twinOK   = "#!/bin/bash\n#SBATCH -J twin\nexit 0\n"
	twinFail = "#!/bin/bash\n#SBATCH -J twin\nexit 1\n"
)

// twinsSubmitted is ok.sh and fail.sh, both named twin, submitted through
// the shim from one directory at once, at an hour ago (at): the wrapper's
// records (ok.sh's at at+0.1 s, fail.sh's at at+0.9 s), and what sacct
// says of their jobs (71, ok.sh's, in the next second; 72, fail.sh's, in
// at's own) and of 70, ok.sh submitted with Slurm's own sbatch 10 s before.
// Each record is nearer in time to the other's job.
func twinsSubmitted(t *testing.T, col *Collector, sl *fakeSlurm) (dir string) {
	t.Helper()
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	dir = t.TempDir()
	sub := func(name, text string, after time.Duration) history.Submission {
		return history.Submission{Fingerprint: "fp-" + name, Source: dir + "/" + name, Script: dir + "/" + name, WorkDir: dir,
			JobName: "twin", User: "ann", Submitted: at.Add(after), Token: name, ScriptHash: history.ScriptHash([]byte(text))}
	}
	if err := col.Store.RecordSubmissions(context.Background(), []history.Submission{
		sub("ok.sh", twinOK, 100*time.Millisecond), sub("fail.sh", twinFail, 900*time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	clock := func(d time.Duration) string { return at.Add(d).Format("2006-01-02T15:04:05") }
	sl.file("window.psv", "JobIDRaw|JobID|User|State|ExitCode|Submit|ElapsedRaw|WorkDir|JobName\n"+
		fmt.Sprintf("70|70|ann|COMPLETED|0:0|%s|5|%s|twin\n", clock(-10*time.Second), dir)+
		fmt.Sprintf("71|71|ann|COMPLETED|0:0|%s|5|%s|twin\n", clock(time.Second), dir)+
		fmt.Sprintf("72|72|ann|FAILED|1:0|%s|5|%s|twin\n", clock(0), dir))
	return dir
}

// batchScripts is `sacct --batch-script` output for jobs.
func batchScripts(scripts map[string]string) string {
	var b strings.Builder
	for id, text := range scripts {
		fmt.Fprintf(&b, "Batch Script for %s\n%s\n%s\n", id, strings.Repeat("-", 80), text)
	}
	return b.String()
}

// linkedScripts maps each job id in the history to the script a
// submission links it to, "" for none.
func linkedScripts(t *testing.T, st *history.Store) map[string]string {
	t.Helper()
	recs, err := st.History(context.Background(), history.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range recs {
		out[r.JobID] = r.Script[strings.LastIndex(r.Script, "/")+1:]
	}
	return out
}

// notUnlinked are those of ids that got (linkedScripts') does not hold as
// a job linked to nothing: linked, or not in the history at all. A check
// that a job is linked to nothing fails where the job is missing: it
// cannot see its subject.
func notUnlinked(got map[string]string, ids ...string) []string {
	var out []string
	for _, id := range ids {
		if script, ok := got[id]; !ok || script != "" {
			out = append(out, id)
		}
	}
	return out
}

// A plain collect with two scripts of one job name submitted at once
// through the shim, where slurmdbd has no script of their jobs: time
// cannot tell which job is whose, so neither is linked (each record was
// nearer the other's job: linked, the failure would be filed under the
// script that completed), and neither is the job submitted 10 s before.
func TestRunLeavesSameNameTwinsUnlinked(t *testing.T) {
	sl := newFakeSlurm(t)
	sl.file("cluster", "c1\n")
	col := runCollector(t, sl)
	twinsSubmitted(t, col, sl)
	if _, err := Run(context.Background(), col, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := linkedScripts(t, col.Store); notUnlinked(got, "70", "71", "72") != nil {
		t.Errorf("linked %v, want jobs 70, 71 and 72 in the history, none linked", got)
	}
	if n, _ := col.Store.PendingCount(context.Background(), time.Time{}); n != 2 {
		t.Errorf("%d records wait, want both", n)
	}
}

// Where slurmdbd stored the jobs' scripts (sacct --batch-script), each
// record is linked to the job that ran its own script, the job submitted
// 10 s before to none.
func TestCollectorLinkPendingChecksTheStoredScripts(t *testing.T) {
	ctx := context.Background()
	sl := newFakeSlurm(t)
	sl.file("cluster", "c1\n")
	col := runCollector(t, sl)
	twinsSubmitted(t, col, sl)
	sl.file("scripts", batchScripts(map[string]string{"70": twinOK, "71": twinOK, "72": twinFail}))
	sl.command("sacct", `case "$*" in
*--batch-script*) cat "$d/scripts" ;;
*) cat "$d/window.psv" ;;
esac`)
	rep, err := Run(ctx, col, RunOptions{}) // accounting in, and the records linked through the stored scripts
	if err != nil {
		t.Fatal(err)
	}
	got := linkedScripts(t, col.Store)
	if rep.Linked != 2 || rep.Ambiguous != 0 || got["71"] != "ok.sh" || got["72"] != "fail.sh" || notUnlinked(got, "70") != nil {
		t.Errorf("linked %d, ambiguous %d: %v", rep.Linked, rep.Ambiguous, got)
	}
	// Linked once: a second pass finds nothing left to link.
	if res, err := col.LinkPending(ctx, time.Now(), time.Time{}); err != nil || res.Linked != 0 {
		t.Errorf("a second pass: %+v %v", res, err)
	}
}

// A job submitted through the shim a moment ago may not be in accounting
// on the first ask: FindPendingWithin asks again until it is, within its
// patience, and says what still waits when that runs out.
func TestFindPendingWithinWaitsForAccounting(t *testing.T) {
	ctx := context.Background()
	sl := newFakeSlurm(t)
	sl.file("cluster", "c1\n")
	col := runCollector(t, sl)
	dir, at := t.TempDir(), time.Now().Truncate(time.Second)
	if err := col.Store.RecordSubmissions(ctx, []history.Submission{{Fingerprint: "fp-late", Source: dir + "/late.sh",
		Script: dir + "/late.sh", WorkDir: dir, JobName: "late", User: "ann", Submitted: at, Token: "late"}}); err != nil {
		t.Fatal(err)
	}
	header := "JobIDRaw|JobID|User|State|ExitCode|Submit|ElapsedRaw|WorkDir|JobName\n"
	sl.file("empty.psv", header)
	sl.file("late.psv", header+fmt.Sprintf("81|81|ann|PENDING|0:0|%s|0|%s|late\n", at.Format("2006-01-02T15:04:05"), dir))
	// slurmdbd has the job from the second ask on.
	sl.command("sacct", `case "$*" in
*--batch-script*) ;;
*) if [ -e "$d/asked" ]; then cat "$d/late.psv"; else touch "$d/asked"; cat "$d/empty.psv"; fi ;;
esac`)
	res, err := col.FindPendingWithin(ctx, 0)
	if err != nil || res.Linked != 0 || res.Waiting != 1 {
		t.Fatalf("no patience, one ask: %+v %v", res, err)
	}
	sl.command("sacct", `case "$*" in
*--batch-script*) ;;
*) if [ -e "$d/again" ]; then cat "$d/late.psv"; else touch "$d/again"; cat "$d/empty.psv"; fi ;;
esac`)
	if res, err = col.FindPendingWithin(ctx, 5*time.Second); err != nil || res.Linked != 1 || res.Waiting != 0 {
		t.Errorf("asked again within its patience: %+v %v", res, err)
	}
}

// Where sacct --batch-script fails (slurmdbd down, a Slurm before 21.08),
// the records are paired by time alone, and the collect says so once, in
// its summary and its --json: never as if slurmdbd kept no scripts.
func TestRunSaysTheStoredScriptsCouldNotBeRead(t *testing.T) {
	sl := newFakeSlurm(t)
	sl.file("cluster", "c1\n")
	col := runCollector(t, sl)
	twinsSubmitted(t, col, sl)
	sl.command("sacct", `case "$*" in
*--batch-script*) echo "sacct: error: slurmdbd: Connection refused" >&2; exit 1 ;;
*) cat "$d/window.psv" ;;
esac`)
	rep, err := Run(context.Background(), col, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ambiguous != 2 || !strings.Contains(rep.ScriptsUnread, "slurmdbd: Connection refused") {
		t.Fatalf("ambiguous %d, scripts unread %q", rep.Ambiguous, rep.ScriptsUnread)
	}
	sum := SummaryOf(SessionReport{Report: rep})
	var text strings.Builder
	sum.WriteText(&text)
	want := "the scripts slurmdbd stored could not be read (sacct --batch-script: sacct failed: sacct: error: slurmdbd: Connection refused), " +
		"so the sbatch wrapper's submissions were paired with their jobs by time alone; those time cannot tell apart wait for a later collect\n"
	if strings.Count(text.String(), want) != 1 {
		t.Errorf("the summary does not say it once:\n%s", text.String())
	}
	data, _ := json.Marshal(sum)
	if !strings.Contains(string(data), `"stored_scripts_unread":"sacct --batch-script: sacct failed: sacct: error: slurmdbd: Connection refused"`) {
		t.Errorf("--json: %s", data)
	}
}
