package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
)

// submitted is a fake Slurm that has the jobs ids, each queued for polls looks.
func submitted(polls int, n int) (*fakeSlurm, []string) {
	s := newFakeSlurm(polls)
	var ids []string
	for i := 0; i < n; i++ {
		ref, _ := s.Submit(context.Background(), "", fmt.Sprintf("p%d.sh", i))
		ids = append(ids, ref.ID)
	}
	return s, ids
}

// The wait ends once every job has left the queue, asking less and less
// often up to the poll interval, and its progress moves as jobs end.
func TestWaitEndsWhenTheJobsLeaveTheQueue(t *testing.T) {
	s, ids := submitted(3, 2)
	s.seen[ids[1]] = 2 // the second job is one look from its end
	clock := newFakeClock()
	var seen []QueueState
	w := Waiter{Queue: s, Clock: clock, Progress: func(q QueueState) { seen = append(seen, q) }}
	if err := w.Wait(context.Background(), ids, WaitOptions{Poll: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	want := []QueueState{{Total: 2, Pending: 1, Running: 1}, {Total: 2, Done: 1, Running: 1}, {Total: 2, Done: 1, Running: 1}, {Total: 2, Done: 2}}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("progress %v\nwant     %v", seen, want)
	}
	if got := fmt.Sprint(clock.sleeps); got != "[1s 1.5s 2s]" {
		t.Errorf("sleeps %s, want 1s, 1.5s, then the poll interval", got)
	}
}

// An array counts as one job until all its tasks end: its tasks must not
// push the count of ended jobs below zero (the bar sat at 0/4).
func TestWaitCountsAnArrayAsOneJob(t *testing.T) {
	q := []slurm.QueuedJob{{ID: "7_1", State: "RUNNING"}, {ID: "7_2", State: "PENDING"}, {ID: "7_3", State: "COMPLETED"},
		{ID: "8", State: "COMPLETED"}, {ID: "9+0", State: "PENDING"}, {ID: "9+1", State: "PENDING"}}
	got := queueState([]string{"7", "8", "9", "10"}, q)
	if want := (QueueState{Total: 4, Done: 2, Pending: 1, Running: 1}); got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
}

// A wait with a timeout gives up with the number of jobs still queued.
func TestWaitTimesOut(t *testing.T) {
	s, ids := submitted(1000, 3)
	clock := newFakeClock()
	err := Waiter{Queue: s, Clock: clock}.Wait(context.Background(), ids, WaitOptions{Timeout: time.Minute, Poll: 15 * time.Second})
	var te *TimeoutError
	if !errors.As(err, &te) || te.Queued != 3 || err.Error() != "3 jobs still queued after --timeout 1m0s" {
		t.Fatalf("err %v", err)
	}
	if waited := clock.now.Sub(newFakeClock().now); waited < time.Minute || waited > time.Minute+15*time.Second {
		t.Errorf("gave up after %s", waited)
	}
}

// Cancelling (Ctrl-C) stops the wait at once with the context's error.
func TestWaitStopsWhenCancelled(t *testing.T) {
	s, ids := submitted(1000, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := newFakeClock()
	clock.onSleep = func(n int) {
		if n == 3 {
			cancel()
		}
	}
	err := Waiter{Queue: s, Clock: clock}.Wait(ctx, ids, WaitOptions{})
	if !errors.Is(err, context.Canceled) || len(clock.sleeps) != 3 {
		t.Errorf("err %v after %d sleeps", err, len(clock.sleeps))
	}
}

// A squeue that fails ends the wait with its error, said as the wait's,
// as a wait that stopped with its jobs still in Slurm.
func TestWaitReportsAFailingQueue(t *testing.T) {
	s, ids := submitted(1, 1)
	s.queueErr = errors.New("squeue: slurm_load_jobs error: Unable to contact slurm controller")
	err := Waiter{Queue: s, Clock: newFakeClock()}.Wait(context.Background(), ids, WaitOptions{})
	if err == nil || err.Error() != "wait for 1 job: squeue: slurm_load_jobs error: Unable to contact slurm controller" || !StoppedWaiting(err) {
		t.Errorf("err %v", err)
	}
}

// A job Slurm no longer knows (squeue does not show it, accounting has
// no record) ends the wait at once, and collecting says so.
func TestAJobSlurmNoLongerKnows(t *testing.T) {
	s, ids := submitted(2, 1)
	gone := "4242"
	clock := newFakeClock()
	if err := (Waiter{Queue: s, Clock: clock}).Wait(context.Background(), []string{gone}, WaitOptions{}); err != nil || len(clock.sleeps) != 0 {
		t.Fatalf("err %v after %d sleeps", err, len(clock.sleeps))
	}
	h := &fakeHistory{subs: []history.Submission{{Cluster: "fake", JobID: ids[0], Profile: "p0"}, {Cluster: "fake", JobID: gone, Profile: "1g.10gb"}}}
	acct := &fakeAccounting{h: h, slurm: s, ends: map[string]string{"p0": "gpu-oom"}}
	e, err := CollectEnded(context.Background(), acct, h, catalogtest.Wulver(t), append(ids, gone), nil)
	if err != nil || fmt.Sprint(e.Unknown) != "[4242]" || len(e.Tracked) != 2 || acct.scanned != 1 {
		t.Fatalf("%+v %v", e, err)
	}
	var rows []JobStatus
	for _, tr := range e.Tracked {
		rows = append(rows, StatusOf(tr, Live{OK: true, Unknown: e.Unknown}, e.Outcomes))
	}
	if rows[0].State != "FAILED" || rows[0].Outcome != outcome.GPUOOM {
		t.Errorf("the job that ended: %+v", rows[0])
	}
	if r := rows[1]; r.State != StateNotInSlurm || r.Outcome != OutcomeNoSuchJob || r.Explanation != "Slurm has no job 4242: was the id mistyped?" {
		t.Errorf("the job Slurm does not know: %+v", r)
	}
}

// A wait follows the ids named, else the sweep's submitted jobs, else every
// tracked job not ended; it reads the history only in that last case.
func TestWaitTargets(t *testing.T) {
	h := &fakeHistory{subs: []history.Submission{{Cluster: "c", JobID: "7"}, {Cluster: "c", JobID: "8"}},
		records: []history.JobRecord{{Cluster: "c", Key: "7", JobID: "7", State: "COMPLETED"}}}
	ids, err := WaitTargets(context.Background(), WaitQuery{IDs: []string{"42", "43"}, SweepDir: "/no/such/sweep"}, h)
	if err != nil || strings.Join(ids, " ") != "42 43" || h.reads != 0 {
		t.Errorf("named: %v, %v; the history read %d times", ids, err, h.reads)
	}
	dir := t.TempDir()
	sw := &Sweep{Version: SweepVersion, Profiles: []string{"1g.10gb", "full"},
		Variants: map[string]*Variant{"1g.10gb": {Profile: "1g.10gb", File: "1g.10gb.sh"}, "full": {Profile: "full", File: "full.sh"}}}
	if err := SaveSweep(dir, sw); err != nil {
		t.Fatal(err)
	}
	if _, err := WaitTargets(context.Background(), WaitQuery{SweepDir: dir}, h); err == nil || !strings.Contains(err.Error(), "was not submitted (run sweep with --submit)") {
		t.Errorf("an unsubmitted sweep: %v", err)
	}
	sw.Variants["full"].JobID = "99"
	if err := SaveSweep(dir, sw); err != nil {
		t.Fatal(err)
	}
	if ids, err := WaitTargets(context.Background(), WaitQuery{SweepDir: dir}, h); err != nil || strings.Join(ids, " ") != "99" || h.reads != 0 {
		t.Errorf("a sweep: %v, %v; the history read %d times", ids, err, h.reads)
	}
	if ids, err := WaitTargets(context.Background(), WaitQuery{}, h); err != nil || strings.Join(ids, " ") != "8" {
		t.Errorf("the tracked jobs not ended: %v, %v", ids, err)
	}
	h.failOn = "Tracked"
	if _, err := WaitTargets(context.Background(), WaitQuery{}, h); err == nil {
		t.Error("a history that cannot be read: no error")
	}
}

// The untracked jobs among those named are those no submission links to a
// script, in the order named.
func TestUntracked(t *testing.T) {
	h := &fakeHistory{subs: []history.Submission{{Cluster: "c", JobID: "7"}}}
	got, err := Untracked(context.Background(), h, []string{"9", "7", "8"})
	if err != nil || strings.Join(got, " ") != "9 8" {
		t.Errorf("untracked %v, %v", got, err)
	}
	if got, _ := Untracked(context.Background(), h, []string{"7"}); got != nil {
		t.Errorf("all tracked: %v", got)
	}
}

// A probe's --ladder directory holds a sweep per rung: a wait for it
// follows every rung's jobs (seen: "open …/sweep.json: no such file").
func TestWaitTargetsOfALadder(t *testing.T) {
	dir := t.TempDir()
	for _, rung := range []struct{ profile, id string }{{"1g.10gb", "41"}, {"2g.20gb", "42"}} {
		sw := &Sweep{Version: SweepVersion, Profiles: []string{rung.profile},
			Variants: map[string]*Variant{rung.profile: {Profile: rung.profile, File: rung.profile + ".sh", JobID: rung.id}}}
		if err := os.Mkdir(filepath.Join(dir, rung.profile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := SaveSweep(filepath.Join(dir, rung.profile), sw); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := WaitTargets(context.Background(), WaitQuery{SweepDir: dir}, &fakeHistory{})
	if err != nil || strings.Join(ids, " ") != "41 42" {
		t.Errorf("a ladder: %v, %v; want both rungs' jobs", ids, err)
	}
	if _, err := WaitTargets(context.Background(), WaitQuery{SweepDir: t.TempDir()}, &fakeHistory{}); err == nil || !strings.Contains(err.Error(), SweepFileName) {
		t.Errorf("a directory with no sweep: %v", err)
	}
}
