//go:build slurm

// The replay's fidelity on the dev cluster (issue 41 §3): a real queue,
// submitted through real Slurm in bursts over the node's slices, collected
// from accounting by the real collect, replayed, and each replayed wait set
// against the recorded one. make plan-fidelity runs it alone.

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/replay"
	"github.com/migadvisor/migadvisor/advisor/base/replay/fidelity"
)

// The dev cluster's node (scripts/dev-cluster.sh): each profile's GRES
// type, its slices, and what its jobs ask of the node's 8 CPUs and 8 GiB.
// Five jobs at once ask at most 5 CPUs and 4 GiB: the node's CPUs and
// memory, which the replay does not model, never hold a job back.
var fidelityNode = []struct {
	profile, gres, mem string
	slices             int
}{
	{"1g.10gb", "a100_10g", "256M", 2},
	{"2g.20gb", "a100_20g", "512M", 1},
	{"3g.40gb", "a100_40g", "1G", 1},
	{"full", "a100", "2G", 1},
}

// The queue: fidelityBursts bursts, fidelityGap apart, of fidelityBurst
// jobs each, submitted one after another. Fixed before any run and the
// same every run (a seeded generator): the gate is not fitted to results.
const (
	fidelityBursts = 6
	fidelityBurst  = 52
	fidelityGap    = 40 * time.Second
	fidelitySeed   = 41
)

// fidelityJob is one job of the queue.
type fidelityJob struct {
	burst    int
	node     int // its profile's row of fidelityNode
	count    int // slices asked, on one node
	sleepS   int // its runtime, less Slurm's start and end
	limitMin int // its time limit
}

// fidelityQueue draws the queue. Profiles in proportion to their slices,
// a tenth of the 1g.10gb jobs asking two; runtimes of 1-3 s and a tenth of
// 6 s, so that queues build in each burst and drain before the next; time
// limits half 1 minute, a quarter 2-3 and a quarter 10-30, far above the
// runtimes as users' are: the scheduler plans with the limits, so the
// long-limit jobs make reservations far ahead, and the short ones can be
// backfilled before them.
func fidelityQueue() []fidelityJob {
	rng := rand.New(rand.NewPCG(fidelitySeed, 3))
	var q []fidelityJob
	for b := range fidelityBursts {
		for range fidelityBurst {
			j := fidelityJob{burst: b, count: 1, sleepS: 1 + rng.IntN(3), limitMin: 1}
			switch u := rng.Float64(); {
			case u < 0.4:
				j.node = 0
				if rng.Float64() < 0.1 {
					j.count = 2
				}
			case u < 0.6:
				j.node = 1
			case u < 0.8:
				j.node = 2
			default:
				j.node = 3
			}
			if rng.Float64() < 0.1 {
				j.sleepS = 6
			}
			switch u := rng.Float64(); {
			case u < 0.25:
				j.limitMin = []int{10, 20, 30}[rng.IntN(3)]
			case u < 0.5:
				j.limitMin = 2 + rng.IntN(2)
			}
			q = append(q, j)
		}
	}
	return q
}

// fidelitySlots is the node's layout as the replay counts it.
func fidelitySlots() replay.Slots {
	s := replay.Slots{}
	for _, n := range fidelityNode {
		s[n.profile] = n.slices
	}
	return s
}

// fidelityMinBackfill is how many jobs Slurm's backfill must start for the
// gate to have tested backfill: a few, as runs saw 7 to 15 (the main
// scheduler starts the rest).
const fidelityMinBackfill = 3

// TestSlurmPlanFidelity: a queue of 312 short GPU jobs in six bursts over
// the dev cluster's five slices, run by real Slurm (sched/backfill, its
// defaults) and collected by migadvisor collect, is replayed from its
// accounting; the median absolute error of the replayed waits is at most
// 10% of the mean recorded wait, or 30 s (issue 41). The queue must have
// waited (a mean of 30 s at least) and Slurm's backfill must have started
// some of its jobs (slurmctld's log says which), or the gate tests
// nothing.
func TestSlurmPlanFidelity(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	t.Chdir(work)
	db := filepath.Join(work, "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	waitQueueEmpty(t, 2*time.Minute)
	script := writeScript(t, work, "sleep.sh", "#!/bin/bash\nsleep \"$1\"\n")
	since := time.Now().Add(-time.Minute)
	queue := fidelityQueue()
	ids := submitFidelityQueue(t, script, queue)
	waitGone(t, ids, 10*time.Minute)
	recs := collectFinal(t, db, since, ids)

	res, err := fidelity.Check(recs, fidelitySlots(), replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	res.WriteText(&text)
	byMain, byBackfill := startedBy(t, ids)
	t.Logf("%d jobs in %d bursts, %d started by Slurm's main scheduler, %d by its backfill\n%s",
		len(ids), fidelityBursts, byMain, byBackfill, text.String())
	if keep := os.Getenv("MIGADVISOR_PLAN_FIDELITY_KEEP"); keep != "" {
		keepRecords(t, recs, keep)
	}
	if res.Jobs != len(queue) {
		t.Errorf("%d of the %d jobs compared; left out: %+v", res.Jobs, len(queue), res.Skipped)
	}
	if res.MeanWaitS < 30 || byBackfill < fidelityMinBackfill {
		t.Errorf("the queue waited %.0f s on average and backfill started %d jobs: the gate needs queues (30 s) and backfill (%d jobs)",
			res.MeanWaitS, byBackfill, fidelityMinBackfill)
	}
	if !res.OK {
		t.Errorf("the replay is off: median |error| %.0f s, over the bound %.0f s", res.MedianAbsErrS, res.BoundS)
	}
}

// waitQueueEmpty waits for the cluster to run nothing: a job of an earlier
// test would hold slices the replay does not know of.
func waitQueueEmpty(t *testing.T, limit time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(limit); ; time.Sleep(2 * time.Second) {
		left := queued(t)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dev cluster still runs jobs %v: the fidelity test needs it to itself", left)
		}
	}
}

// queued lists the ids of every job Slurm holds, pending or running.
func queued(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("squeue", "-h", "-o", "%i").Output()
	if err != nil {
		t.Fatalf("squeue: %v", err)
	}
	return strings.Fields(string(out))
}

// submitFidelityQueue submits the queue's bursts on time, each job with
// sbatch as a user would, and returns the job ids in submission order. The
// jobs are cancelled when the test ends, should it fail before they do.
func submitFidelityQueue(t *testing.T, script string, queue []fidelityJob) []string {
	t.Helper()
	var ids []string
	t.Cleanup(func() {
		if len(ids) > 0 {
			exec.Command("scancel", ids...).Run()
		}
	})
	start := time.Now()
	for _, j := range queue {
		time.Sleep(time.Until(start.Add(time.Duration(j.burst) * fidelityGap)))
		n := fidelityNode[j.node]
		out, err := exec.Command("sbatch", "--parsable", "--job-name=fidelity", "--partition=gpu",
			fmt.Sprintf("--gres=gpu:%s:%d", n.gres, j.count), "--cpus-per-task=1", "--mem="+n.mem,
			fmt.Sprintf("--time=%d", j.limitMin), "--output=/dev/null", script, fmt.Sprint(j.sleepS)).Output()
		if err != nil {
			t.Fatalf("sbatch: %v", err)
		}
		ids = append(ids, strings.TrimSpace(string(out)))
	}
	return ids
}

// waitGone waits until none of ids is queued.
func waitGone(t *testing.T, ids []string, limit time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(limit); ; time.Sleep(2 * time.Second) {
		left := slices.DeleteFunc(queued(t), func(id string) bool { return !slices.Contains(ids, id) })
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still queued after %v", len(left), limit)
		}
	}
}

// collectFinal collects the cluster's jobs since then with migadvisor
// collect until every one of ids is in the history with its final record
// (slurmdbd first keeps a placeholder for a short job), and returns their
// records.
func collectFinal(t *testing.T, db string, since time.Time, ids []string) []history.JobRecord {
	t.Helper()
	for try := 0; ; try++ {
		mustRun(t, "collect", "--all-users", "--since", since.Format("2006-01-02T15:04:05"), "--scripts=false")
		recs, missing := finalRecords(t, db, ids)
		if missing == "" {
			return recs
		}
		if try == 30 {
			t.Fatalf("after %d collects: %s", try+1, missing)
		}
		time.Sleep(2 * time.Second)
	}
}

// finalRecords are the history's records of ids; missing says which one
// is not there, or not final, "" when all are.
func finalRecords(t *testing.T, db string, ids []string) (recs []history.JobRecord, missing string) {
	t.Helper()
	st, err := history.OpenWith(t.Context(), db, history.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all, err := st.History(t.Context(), history.HistoryFilter{GPU: true})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]history.JobRecord{}
	for _, r := range all {
		byKey[r.Key] = r
	}
	for _, id := range ids {
		r, ok := byKey[id]
		switch {
		case !ok:
			return nil, "job " + id + " is not in the history"
		case r.Stub || r.State != "COMPLETED":
			return nil, fmt.Sprintf("job %s is %s (placeholder: %v)", id, r.State, r.Stub)
		}
		recs = append(recs, r)
	}
	return recs, ""
}

// slurmctld logs each start: "sched: Allocate JobId=N" from the main
// scheduler, "sched/backfill: _start_job: Started JobId=N" from backfill.
var startLine = regexp.MustCompile(`\] (sched: Allocate|sched/backfill: _start_job: Started) JobId=(\d+) `)

// startedBy counts the jobs of ids each scheduler started, from
// slurmctld's log.
func startedBy(t *testing.T, ids []string) (byMain, byBackfill int) {
	t.Helper()
	out, err := exec.Command("scontrol", "show", "config").Output()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^SlurmctldLogFile\s*=\s*(\S+)`).FindSubmatch(out)
	if m == nil {
		t.Fatal("scontrol show config names no SlurmctldLogFile")
	}
	f, err := os.Open(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ours := map[string]bool{}
	for _, id := range ids {
		ours[id] = true
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s := startLine.FindStringSubmatch(sc.Text()); s != nil && ours[s[2]] {
			if s[1] == "sched: Allocate" {
				byMain++
			} else {
				byBackfill++
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return byMain, byBackfill
}

// keepRecords writes the jobs' records to dir as JSON, for a look at them
// after the test (MIGADVISOR_PLAN_FIDELITY_KEEP).
func keepRecords(t *testing.T, recs []history.JobRecord, dir string) {
	t.Helper()
	data, err := json.Marshal(recs)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "plan-fidelity-"+time.Now().Format("20060102-150405")+".json"), data, 0o644)
	}
	if err != nil {
		t.Errorf("keeping the records: %v", err)
	}
}
