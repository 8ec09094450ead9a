package replay

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// job is a job of the hand-built queues, priority 0.
func job(id, submit int64, profile string, count int, limit, runtime int64) Job {
	return Job{ID: id, Submit: submit, Profile: profile, Count: count, LimitS: limit, RuntimeS: runtime}
}

// eachEvent plans backfill at every submission and end: the hand-built
// queues of the plan's own rules, with no cycle to wait for (the cycles'
// tests are in cycles_test.go).
var eachEvent = Options{BackfillIntervalS: -1}

func replay(t *testing.T, slots Slots, jobs []Job, opt Options) Result {
	t.Helper()
	r, err := Replay(slots, jobs, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// wantStarts checks each job's start (by id) and that its end and wait
// follow from it: its runtime, cut at its limit, and its submission.
func wantStarts(t *testing.T, r Result, jobs []Job, starts map[int64]int64) {
	t.Helper()
	for i, j := range jobs {
		want, ok := starts[j.ID]
		if !ok {
			continue
		}
		got := r.Jobs[i]
		end := want + min(j.RuntimeS, j.LimitS)
		if !got.Placed || got.Start != want || got.End != end || got.WaitS != want-j.Submit {
			t.Errorf("job %d: %+v, want start %d, end %d, wait %d", j.ID, got, want, end, want-j.Submit)
		}
	}
}

func stats(t *testing.T, r Result, profile string) ProfileStats {
	t.Helper()
	for _, p := range r.Profiles {
		if p.Profile == profile {
			return p
		}
	}
	t.Fatalf("no figures for %s in %+v", profile, r.Profiles)
	return ProfileStats{}
}

func TestFIFOOnOneSlot(t *testing.T) {
	// One slot: 1 runs 0-100; 2 waits for it, 100-150 (wait 90); 3 waits
	// for 2, 150-180 (wait 130). 3's limit (60) would fit no hole: there
	// is none.
	jobs := []Job{
		job(1, 0, "1g.10gb", 1, 100, 100),
		job(2, 10, "1g.10gb", 1, 60, 50),
		job(3, 20, "1g.10gb", 1, 60, 30),
	}
	r := replay(t, Slots{"1g.10gb": 1}, jobs, eachEvent)
	wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 100, 3: 150})
	// Waits 0, 90, 130: the median is the 2nd (90), the 95th percentile
	// the 3rd (ceil(0.95×3) = 3). The slot ran 100+50+30 = 180 s of the
	// span 0-180.
	p := stats(t, r, "1g.10gb")
	if p.Jobs != 3 || p.P50WaitS != 90 || p.P95WaitS != 130 || p.BusySlotS != 180 || p.Busy != 1 {
		t.Errorf("%+v, want 3 jobs, p50 90 s, p95 130 s, 180 slot-s, busy 1", p)
	}
	if r.FromS != 0 || r.ToS != 180 {
		t.Errorf("span %d-%d, want 0-180", r.FromS, r.ToS)
	}
}

func TestProfilesAreIndependent(t *testing.T) {
	// 1 holds the one 3g.40gb slot 0-100 and 2, ahead of 3 in the queue,
	// waits for it (100-200). 3 asks the one 1g.10gb slot, which no job
	// ahead of it waits for: planned at every event, backfill starts it
	// when submitted, at 5, though the main scheduler stops at 2 (with
	// Slurm's cycles it waits for the next: TestMainSchedulerStopsAtTheFirstJobBlocked).
	jobs := []Job{
		job(1, 0, "3g.40gb", 1, 100, 100),
		job(2, 0, "3g.40gb", 1, 100, 100),
		job(3, 5, "1g.10gb", 1, 10, 10),
	}
	r := replay(t, Slots{"3g.40gb": 1, "1g.10gb": 1}, jobs, eachEvent)
	wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 100, 3: 5})
	// 3g.40gb waited 0 and 100: the median is the 1st (0), the 95th
	// percentile the 2nd (100); its slot ran all of the span 0-200, the
	// 1g.10gb slot 10 s of it.
	g3, g1 := stats(t, r, "3g.40gb"), stats(t, r, "1g.10gb")
	if g3.P50WaitS != 0 || g3.P95WaitS != 100 || g3.Busy != 1 {
		t.Errorf("3g.40gb %+v, want p50 0 s, p95 100 s, busy 1", g3)
	}
	if g1.P50WaitS != 0 || g1.P95WaitS != 0 || g1.Busy != 0.05 {
		t.Errorf("1g.10gb %+v, want no wait, busy 10/200", g1)
	}
}

// blocked is the queue of the backfill tests on two whole GPUs: 1 holds one
// GPU 0-100 (its limit 100); 2 asks both at 10, and the scheduler reserves
// them from 100, when 1's limit frees the second, to 150; c asks the one
// GPU free at 20.
func blocked(cLimit, cRuntime int64) []Job {
	return []Job{
		job(1, 0, "a100", 1, 100, 100),
		job(2, 10, "a100", 2, 50, 50),
		job(3, 20, "a100", 1, cLimit, cRuntime),
	}
}

func TestSmallJobBackfilledBeforeTheBigOne(t *testing.T) {
	// 3's limit 60 ends it at 80, before 2's reservation at 100: it starts
	// at 20 on the free GPU though 2 is ahead of it. 2 starts at 100 as
	// reserved (wait 90).
	jobs := blocked(60, 60)
	r := replay(t, Slots{"a100": 2}, jobs, eachEvent)
	wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 100, 3: 20})
}

func TestSmallJobNotBackfilledPastTheReservation(t *testing.T) {
	// 3's limit 90 would hold the free GPU to 110, past 100, when 2 is
	// reserved both: it is not started, though its true 30 s would have
	// ended at 50; the scheduler knows only the limit. Its own reservation
	// is after 2's, from 150; 2 runs 100-150, 3 150-180 (wait 130).
	jobs := blocked(90, 30)
	r := replay(t, Slots{"a100": 2}, jobs, eachEvent)
	wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 100, 3: 150})
}

func TestBackfillUpToTheReservationsStart(t *testing.T) {
	// 2's reservation of both GPUs starts at 100. 3's limit 80 holds the
	// free one 20-100: backfilled at 20, and 4 (10 s, after it) waits
	// until 2 ends at 150. With 81, 3 would hold it to 101: it is reserved
	// after 2, from 150, and 4 backfilled at 20 instead.
	four := func(limit int64) []Job { return append(blocked(limit, limit), job(4, 20, "a100", 1, 10, 10)) }
	jobs := four(80)
	r := replay(t, Slots{"a100": 2}, jobs, eachEvent)
	wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 100, 3: 20, 4: 150})
	jobs = four(81)
	r = replay(t, Slots{"a100": 2}, jobs, eachEvent)
	wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 100, 3: 150, 4: 20})
}

func TestEveryReservationIsKept(t *testing.T) {
	// Three GPUs; 1 holds one 0-100 (limit 100), 2 one 0-300 (limit 300).
	// At 10, 3 asks all three: reserved 300-350, when 2's limit frees the
	// last. At 11, 4 asks two for 100 s: reserved 100-200 (1's limit frees
	// the second at 100, and 200 is before 300). At 20, 5 asks one for 150
	// s: 20-170 would take 100-170 from 4's reservation, which leaves no
	// GPU free then, though it would end before 3's: not started, reserved
	// from 350. 6, also at 20 and after 5 by job id, asks one for 80 s:
	// 20-100 fits before 4's reservation and starts.
	// At 100, 1 and 6 end: two free, 3 still waits for 300, and 4 starts
	// (100-200, before 300). At 200 two are free but 5's 150 s would reach
	// past 300: it waits. 3 runs 300-350, 5 350-500.
	jobs := []Job{
		job(1, 0, "a100", 1, 100, 100),
		job(2, 0, "a100", 1, 300, 300),
		job(3, 10, "a100", 3, 50, 50),
		job(4, 11, "a100", 2, 100, 100),
		job(5, 20, "a100", 1, 150, 150),
		job(6, 20, "a100", 1, 80, 80),
	}
	r := replay(t, Slots{"a100": 3}, jobs, eachEvent)
	wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 0, 3: 300, 4: 100, 5: 350, 6: 20})
}

func TestEarlyEndStartsTheNextEarly(t *testing.T) {
	// One slot: 1's limit is 100 but it ends at 40; 2 starts then, not at
	// 100 (wait 30).
	jobs := []Job{
		job(1, 0, "1g.10gb", 1, 100, 40),
		job(2, 10, "1g.10gb", 1, 100, 10),
	}
	r := replay(t, Slots{"1g.10gb": 1}, jobs, eachEvent)
	wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 40})
}

func TestEarlyEndMovesTheReservation(t *testing.T) {
	// The backfilled queue of blocked, but 1 ends at 60 of its 100: then
	// one GPU is free and 3 holds the other to its limit, 80; 2 is
	// reserved from 80 and starts when 3 ends there, not at 100 (wait 70).
	jobs := blocked(60, 60)
	jobs[0].RuntimeS = 60
	r := replay(t, Slots{"a100": 2}, jobs, eachEvent)
	wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 80, 3: 20})
}

func TestRuntimePastTheLimitEndsAtTheLimit(t *testing.T) {
	// 1 would run 80 s but Slurm ends it at its limit, 50; 2 starts then.
	jobs := []Job{
		job(1, 0, "1g.10gb", 1, 50, 80),
		job(2, 0, "1g.10gb", 1, 50, 10),
	}
	r := replay(t, Slots{"1g.10gb": 1}, jobs, eachEvent)
	wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 50})
	if r.Jobs[0].End != 50 {
		t.Errorf("job 1 ends at %d, want 50", r.Jobs[0].End)
	}
}

func TestJobEndingAsItStartsFreesItsSlotAtOnce(t *testing.T) {
	// 1 runs 0 s: it starts at 0 and ends at 0, and 2, submitted at 0
	// too, starts at 0 on the slot it left.
	jobs := []Job{
		job(1, 0, "1g.10gb", 1, 10, 0),
		job(2, 0, "1g.10gb", 1, 10, 5),
	}
	r := replay(t, Slots{"1g.10gb": 1}, jobs, eachEvent)
	wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 0})
}

func TestJobsThatFitNowhereAreListed(t *testing.T) {
	// The layout has two 1g.10gb slots and nothing else: 2's profile is
	// missing and 3 asks three at once. Both are listed with the reason,
	// left unplaced, and counted in their profile's figures; 1 still runs.
	jobs := []Job{
		job(1, 0, "1g.10gb", 1, 10, 10),
		job(2, 0, "3g.40gb", 1, 10, 10),
		job(3, 0, "1g.10gb", 3, 10, 10),
	}
	r := replay(t, Slots{"1g.10gb": 2}, jobs, eachEvent)
	wantStarts(t, r, jobs, map[int64]int64{1: 0})
	want := []Unplaced{
		{Job: 1, ID: 2, Why: "the layout has no 3g.40gb slot"},
		{Job: 2, ID: 3, Why: "it asks 3 × 1g.10gb and the layout has 2"},
	}
	if !slices.Equal(r.Unplaced, want) {
		t.Errorf("unplaced %+v, want %+v", r.Unplaced, want)
	}
	if r.Jobs[1].Placed || r.Jobs[2].Placed {
		t.Errorf("jobs 2 and 3 placed: %+v", r.Jobs)
	}
	g1, g3 := stats(t, r, "1g.10gb"), stats(t, r, "3g.40gb")
	if g1.Slots != 2 || g1.Jobs != 1 || g1.Unplaced != 1 || g3.Slots != 0 || g3.Jobs != 0 || g3.Unplaced != 1 {
		t.Errorf("1g.10gb %+v, 3g.40gb %+v", g1, g3)
	}
}

func TestTiesGoToSubmissionThenJobID(t *testing.T) {
	// One slot. 7 and 5 are submitted at 0 with the same priority: 5, the
	// lower job id, runs first (0-10), whatever the input's order. 6,
	// submitted at 5 with priority 10, goes ahead of 7: 10-20, and 7
	// 20-30.
	jobs := []Job{
		job(7, 0, "1g.10gb", 1, 10, 10),
		job(5, 0, "1g.10gb", 1, 10, 10),
		job(6, 5, "1g.10gb", 1, 10, 10),
	}
	jobs[2].Priority = 10
	want := map[int64]int64{5: 0, 6: 10, 7: 20}
	r := replay(t, Slots{"1g.10gb": 1}, jobs, eachEvent)
	wantStarts(t, r, jobs, want)
	slices.Reverse(jobs)
	r = replay(t, Slots{"1g.10gb": 1}, jobs, eachEvent)
	wantStarts(t, r, jobs, want)
}

func TestMaxJobTestBoundsHowDeepBackfillLooks(t *testing.T) {
	// The backfilled queue of blocked with bf_max_job_test=1: at 20, 2 is
	// pending ahead of 3, so 3 is not tested and not backfilled. At 100, 2
	// starts and holds both GPUs to 150; then 3 is first, and starts at
	// 150.
	jobs := blocked(60, 60)
	r := replay(t, Slots{"a100": 2}, jobs, Options{MaxJobTest: 1, BackfillIntervalS: -1})
	wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 100, 3: 150})
}

func TestMaxJobTestCountsPendingJobsOfEveryProfile(t *testing.T) {
	// bf_max_job_test=1. 1 holds the one 3g.40gb slot 0-100; 2 waits for
	// it. 3, at 5, asks the free 1g.10gb slot, but 2 is pending ahead of
	// it and the depth is spent: it waits until 2 starts at 100, which
	// brings 3 to the head, and it starts then.
	jobs := []Job{
		job(1, 0, "3g.40gb", 1, 100, 100),
		job(2, 0, "3g.40gb", 1, 100, 100),
		job(3, 5, "1g.10gb", 1, 10, 10),
	}
	r := replay(t, Slots{"3g.40gb": 1, "1g.10gb": 1}, jobs, Options{MaxJobTest: 1, BackfillIntervalS: -1})
	wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 100, 3: 100})
}

func TestWindowBoundsTheReservations(t *testing.T) {
	// The queue of blocked with a 50 s bf_window, 3 running 90 s of its
	// 90 s limit. At 10 and 20, 2's earliest start (100) lies past the
	// window's end (60, 70): it gets no reservation, and 3 is checked only
	// to 70, where a GPU is free: it starts at 20 and holds it to 110. At
	// 100, 1 ends and 2 is reserved from 110, where it starts (wait 100),
	// 10 s later than with Slurm's default window, which keeps 3 waiting
	// (as in TestSmallJobNotBackfilledPastTheReservation: 2 at 100, 3 at
	// 150).
	jobs := blocked(90, 90)
	r := replay(t, Slots{"a100": 2}, jobs, Options{WindowS: 50, BackfillIntervalS: -1})
	wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 110, 3: 20})
}

func TestInvalidInputFails(t *testing.T) {
	for name, c := range map[string]struct {
		slots Slots
		job   Job
	}{
		"no slot asked":    {Slots{"a100": 1}, job(1, 0, "a100", 0, 10, 10)},
		"no time limit":    {Slots{"a100": 1}, job(1, 0, "a100", 1, 0, 10)},
		"negative runtime": {Slots{"a100": 1}, job(1, 0, "a100", 1, 10, -1)},
		"negative slots":   {Slots{"a100": -1}, job(1, 0, "a100", 1, 10, 10)},
	} {
		if _, err := Replay(c.slots, []Job{c.job}, Options{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestSlotsAdd(t *testing.T) {
	got := Slots{}.Add(4, "3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb").Add(2, "7g.80gb")
	want := Slots{"3g.40gb": 4, "2g.20gb": 4, "1g.10gb": 8, "7g.80gb": 2}
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for p, n := range want {
		if got[p] != n {
			t.Errorf("%v, want %v", got, want)
		}
	}
}

// A Replayer replaying queue after queue in the memory of the last gives
// what a fresh replay gives each: queues larger and smaller than the one
// before, layouts with and without whole GPUs (whose jobs ask several, so
// size classes come and go), jobs the layout cannot hold.
func TestReplayerAgreesWithFreshReplays(t *testing.T) {
	layouts := []Slots{
		Slots{}.Add(2, "3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb").Add(5, wholeGPU),
		Slots{}.Add(3, "3g.40gb", "3g.40gb"),
		Slots{}.Add(8, wholeGPU),
		Slots{}.Add(4, "2g.20gb", "2g.20gb", "2g.20gb").Add(1, wholeGPU),
	}
	var r Replayer
	rng := rand.New(rand.NewPCG(41, 7))
	for round, n := range []int{300, 2000, 50, 1200, 0, 900, 3000, 10} {
		slots := layouts[round%len(layouts)]
		// Drawn for another layout than the one replayed: some of the
		// jobs' profiles are missing, some ask more GPUs than it has.
		jobs := generate(rng, n, layouts[(round+1)%len(layouts)], 0.9)
		jobs = append(jobs, generate(rng, n/2, slots, 0.9)...)
		for _, opt := range []Options{{}, {BackfillIntervalS: -1, MaxJobTest: 7}} {
			want, err := Replay(slots, jobs, opt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Replay(slots, jobs, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d (%d jobs, %+v): the Replayer's replay differs from a fresh one:\n%#v\n%#v", round, len(jobs), opt, got, want)
			}
		}
	}
}
