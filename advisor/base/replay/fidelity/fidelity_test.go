package fidelity

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/replay"
)

// t0 is the hand-made queues' clock: their times are seconds after it.
var t0 = time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)

func at(s int64) *time.Time {
	t := t0.Add(time.Duration(s) * time.Second)
	return &t
}

// rec is a job as the history holds it: submitted, started and ended at
// those seconds (start or end < 0: none), asking gpus of profile for
// limitMin minutes.
func rec(id, submit, start, end int64, profile string, gpus, limitMin int64, state string) history.JobRecord {
	r := history.JobRecord{Cluster: "migdev", Key: strconv.FormatInt(id, 10), JobID: strconv.FormatInt(id, 10),
		State: state, Submit: at(submit), Profile: profile, GPUCount: gpus, TimeLimitMin: &limitMin}
	if start >= 0 {
		r.Start = at(start)
	}
	if end >= 0 {
		r.End = at(end)
		elapsed := end - max(start, 0)
		r.ElapsedS = &elapsed
	}
	return r
}

func check(t *testing.T, recs []history.JobRecord, slots replay.Slots) Result {
	t.Helper()
	r, err := Check(recs, slots, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRecordedFIFOIsReplayedExactly(t *testing.T) {
	// One 1g.10gb slice, three jobs in a row as Slurm ran them: 1 at
	// 0-100, 2 (submitted at 10) at 100-150, 3 (at 20) at 150-180. The
	// replay, given their runtimes, starts each when Slurm did: no error.
	// The records come newest first, as History lists them.
	recs := []history.JobRecord{
		rec(3, 20, 150, 180, "1g.10gb", 1, 5, "COMPLETED"),
		rec(2, 10, 100, 150, "1g.10gb", 1, 5, "COMPLETED"),
		rec(1, 0, 0, 100, "1g.10gb", 1, 5, "COMPLETED"),
	}
	r := check(t, recs, replay.Slots{"1g.10gb": 1})
	// Waits 0, 90, 130: mean 73.3, median 90; the bound is 30 s, as 10%
	// of the mean is less.
	if r.Jobs != 3 || r.MedianAbsErrS != 0 || r.P90AbsErrS != 0 || r.MeanErrS != 0 || r.Earlier+r.Later != 0 || !r.OK {
		t.Errorf("%+v, want 3 jobs replayed with no error", r)
	}
	if r.MeanWaitS != 220.0/3 || r.MedianWaitS != 90 || r.BoundS != 30 || r.Cluster != "migdev" {
		t.Errorf("mean wait %v, median %v, bound %v, cluster %q; want 73.3, 90, 30, migdev", r.MeanWaitS, r.MedianWaitS, r.BoundS, r.Cluster)
	}
	if len(r.Skipped) != 0 {
		t.Errorf("skipped %+v", r.Skipped)
	}
}

func TestErrorsAreMeasuredBothWays(t *testing.T) {
	// Two slots of a100, each job alone on its own: the replay starts each
	// at its submission. Slurm started them 0, 20, 40, 600 and 1000 s
	// later (a backfill cycle, a held job): errors −0, −20, −40, −600,
	// −1000. Mean wait 332: the bound is 33.2 s; the median error 40 s is
	// over it.
	var recs []history.JobRecord
	for i, wait := range []int64{0, 20, 40, 600, 1000} {
		submit := int64(i) * 10000
		recs = append(recs, rec(int64(i+1), submit, submit+wait, submit+wait+10, "a100", 1, 60, "COMPLETED"))
	}
	r := check(t, recs, replay.Slots{"a100": 2})
	if r.Jobs != 5 || r.MedianAbsErrS != 40 || r.MeanErrS != -332 || r.Earlier != 4 || r.Later != 0 {
		t.Errorf("%+v, want 5 jobs, median |error| 40, mean error -332, 4 earlier", r)
	}
	// p90 between the 4th (600) and 5th (1000) largest: 600 + 0.6×400.
	if r.P90AbsErrS != 840 || r.BoundS != 33.2 || r.OK {
		t.Errorf("p90 %v, bound %v, ok %v; want 840, 33.2, false", r.P90AbsErrS, r.BoundS, r.OK)
	}
	var ids []string
	for _, c := range r.Worst {
		ids = append(ids, c.JobID)
	}
	if !slices.Equal(ids, []string{"5", "4", "3", "2", "1"}) || r.Worst[0].ErrS() != -1000 || r.Worst[0].ReplayedWaitS != 0 {
		t.Errorf("worst %+v, want jobs 5 to 1, 5 replayed at once (error -1000)", r.Worst)
	}
}

func TestReplayLaterThanSlurmCountsLater(t *testing.T) {
	// One slot; Slurm ran 2 before 1 (a priority the history does not
	// keep): 2 at 0-50, 1 at 50-60. The replay's queue is in submission
	// order, then job id: 1 at 0-10 (50 s earlier) and 2 at 10-60 (10 s
	// later).
	recs := []history.JobRecord{
		rec(1, 0, 50, 60, "1g.10gb", 1, 5, "COMPLETED"),
		rec(2, 0, 0, 50, "1g.10gb", 1, 5, "COMPLETED"),
	}
	r := check(t, recs, replay.Slots{"1g.10gb": 1})
	if r.Earlier != 1 || r.Later != 1 || r.MeanErrS != -20 || r.MedianAbsErrS != 30 {
		t.Errorf("%+v, want 1 earlier (-50), 1 later (+10), mean error -20, median |error| 30", r)
	}
}

func TestJobsThatCannotBeComparedAreCountedByReason(t *testing.T) {
	limitless := rec(8, 0, 0, 10, "1g.10gb", 1, 5, "COMPLETED")
	limitless.TimeLimitMin = nil
	stub := rec(9, 0, 0, 10, "1g.10gb", 1, 5, "COMPLETED")
	stub.Stub = true
	nosubmit := rec(10, 0, 0, 10, "1g.10gb", 1, 5, "COMPLETED")
	nosubmit.Submit = nil
	recs := []history.JobRecord{
		rec(1, 0, 0, 100, "1g.10gb", 1, 5, "COMPLETED"),
		rec(2, 0, -1, -1, "1g.10gb", 1, 5, "PENDING"),
		rec(3, 0, 30, 30, "1g.10gb", 1, 5, "CANCELLED by 0"), // cancelled while pending: start = end
		rec(4, 0, -1, 30, "1g.10gb", 1, 5, "CANCELLED by 0"), // or no start at all
		rec(5, 0, 0, 10, "", 0, 5, "COMPLETED"),              // CPUs only
		rec(6, 0, 0, 10, "", 1, 5, "COMPLETED"),              // a GPU of no profile the site knows
		rec(7, 0, 0, 10, "3g.40gb", 1, 5, "COMPLETED"),       // not in the layout
		limitless, stub, nosubmit,
		rec(11, 0, 0, 10, "1g.10gb", 3, 5, "COMPLETED"),   // more slices than the layout has
		rec(12, 50, 40, 60, "1g.10gb", 1, 5, "COMPLETED"), // a clock gone back
	}
	r := check(t, recs, replay.Slots{"1g.10gb": 2})
	// Most jobs first, then by reason.
	want := []Skip{
		{SkipNeverStarted, 3},
		{SkipNoProfile, 1},
		{SkipStub, 1},
		{"it asks 3 × 1g.10gb and the layout has 2", 1},
		{SkipNoGPU, 1},
		{SkipNoSubmit, 1},
		{SkipNoLimit, 1},
		{SkipBeforeSubmit, 1},
		{"the layout has no 3g.40gb slot", 1},
	}
	if r.Jobs != 1 || !slices.Equal(r.Skipped, want) {
		t.Errorf("compared %d, skipped %+v; want 1 and %+v", r.Jobs, r.Skipped, want)
	}
}

func TestCancelledWhileRunningIsCompared(t *testing.T) {
	// 1 was cancelled after 40 s of its 5 minutes: it held the slot 0-40,
	// and 2 started at 40, as the replay has it.
	recs := []history.JobRecord{
		rec(1, 0, 0, 40, "1g.10gb", 1, 5, "CANCELLED by 0"),
		rec(2, 5, 40, 50, "1g.10gb", 1, 5, "COMPLETED"),
	}
	r := check(t, recs, replay.Slots{"1g.10gb": 1})
	if r.Jobs != 2 || r.MedianAbsErrS != 0 || r.Worst[0].RuntimeS != 40 {
		t.Errorf("%+v, want both compared, no error", r)
	}
}

func TestRunningJobHoldsItsSlotToItsLimit(t *testing.T) {
	// 1 still runs (no end): the replay holds its slot to its limit, 5
	// minutes, so 2, pending behind it, starts at 300 there. 2's recorded
	// wait is unknown (never started) and 1's, 0, matches.
	recs := []history.JobRecord{
		rec(1, 0, 0, -1, "1g.10gb", 1, 5, "RUNNING"),
		rec(2, 10, -1, -1, "1g.10gb", 1, 5, "PENDING"),
		rec(3, 0, 0, -1, "2g.20gb", 1, 5, "RUNNING"),
	}
	r := check(t, recs, replay.Slots{"1g.10gb": 1, "2g.20gb": 1})
	if r.Jobs != 2 || r.MedianAbsErrS != 0 || !slices.Equal(r.Skipped, []Skip{{SkipNeverStarted, 1}}) {
		t.Errorf("%+v", r)
	}
	for _, c := range r.Worst {
		if c.RuntimeS != 300 {
			t.Errorf("job %s replayed for %d s, want its limit, 300", c.JobID, c.RuntimeS)
		}
	}
}

func TestBoundIsTenPercentOfALongMeanWait(t *testing.T) {
	// One slot, two jobs: 2 waited 1000 s for 1 (limit 20 minutes, it ran
	// 1000 s), as the replay has it. Mean wait 500: the bound is 50 s.
	recs := []history.JobRecord{
		rec(1, 0, 0, 1000, "full", 1, 20, "COMPLETED"),
		rec(2, 0, 1000, 1010, "full", 1, 20, "COMPLETED"),
	}
	r := check(t, recs, replay.Slots{"full": 1})
	if r.BoundS != 50 || !r.OK || r.MeanWaitS != 500 {
		t.Errorf("%+v, want bound 50, within", r)
	}
}

func TestNothingToCompare(t *testing.T) {
	r := check(t, nil, replay.Slots{"full": 1})
	if r.Jobs != 0 || r.OK || r.BoundS != MinBoundS || r.Summary() != "no job to compare the replay with" {
		t.Errorf("%+v: %s", r, r.Summary())
	}
}

func TestSeveralClustersAreRefused(t *testing.T) {
	a := rec(1, 0, 0, 10, "full", 1, 5, "COMPLETED")
	b := rec(1, 0, 0, 10, "full", 1, 5, "COMPLETED")
	b.Cluster = "wulver"
	_, err := Check([]history.JobRecord{a, b}, replay.Slots{"full": 1}, replay.Options{})
	if err == nil || !strings.Contains(err.Error(), "[migdev wulver]") {
		t.Errorf("error %v, want one naming both clusters", err)
	}
}

func TestWriteText(t *testing.T) {
	recs := []history.JobRecord{
		rec(1, 0, 0, 100, "1g.10gb", 1, 5, "COMPLETED"),
		rec(2, 0, 160, 170, "1g.10gb", 1, 5, "COMPLETED"),
		rec(3, 0, -1, -1, "1g.10gb", 1, 5, "PENDING"),
	}
	r := check(t, recs, replay.Slots{"1g.10gb": 1})
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	// 2 waited 160 s, replayed 100: errors 0 and 60, median 30; mean wait 80.
	want := `Fidelity of the replay: 2 jobs: median |replayed − recorded wait| 30 s, within the bound 30 s (10% of the mean wait 80 s, or 30 s)
  p90 |error| 54 s; mean error -30 s: the replay started 1 job earlier than Slurm, 0 later
  starting every job at its submission would err by a median of 80 s
  left out: 1 job: never started (still pending, or cancelled while pending)
  job 2 (1 × 1g.10gb, limit 300 s, ran 10 s): waited 160 s, replayed 100 s
  job 1 (1 × 1g.10gb, limit 300 s, ran 100 s): waited 0 s, replayed 0 s
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// The worst errors, kept one job at a time, are those a stable sort of
// every compared job puts first: the largest error, then the lower job
// id, then the earlier job where both tie.
func TestWorstAreTheLargestErrorsInOrder(t *testing.T) {
	var all []Compared
	var sc scorer
	for i := range 200 {
		c := Compared{JobID: strconv.Itoa(i % 7), RecordedWaitS: int64(i % 13), ReplayedWaitS: int64(i % 5 * 3), id: int64(i % 11)}
		all = append(all, c)
		sc.add(c)
	}
	slices.SortStableFunc(all, worseFirst)
	if !slices.Equal(sc.worst, all[:WorstJobs]) {
		t.Errorf("kept %+v, want %+v", sc.worst, all[:WorstJobs])
	}
}
