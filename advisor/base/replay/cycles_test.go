package replay

import "testing"

// The two schedulers of Slurm's defaults: the main one at every submission
// and end, stopping at the first job that cannot start; backfill every 30
// s (Options{}).

func TestMainSchedulerStopsAtTheFirstJobBlocked(t *testing.T) {
	// TestProfilesAreIndependent's queue with Slurm's cycles. Backfill's
	// first cycle runs at 0, the first submission, and starts 1; 2 waits
	// for the 3g.40gb slot. At 5 the main scheduler stops at 2, so 3 waits
	// on the free 1g.10gb slot for backfill's next cycle, at 30 (wait 25).
	// At 100 1 ends and 2 starts.
	jobs := []Job{
		job(1, 0, "3g.40gb", 1, 100, 100),
		job(2, 0, "3g.40gb", 1, 100, 100),
		job(3, 5, "1g.10gb", 1, 10, 10),
	}
	r := replay(t, Slots{"3g.40gb": 1, "1g.10gb": 1}, jobs, Options{})
	wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 100, 3: 30})
}

func TestMainSchedulerStartsJobsInOrderUpToTheBlockedOne(t *testing.T) {
	// Two 1g.10gb slots busy 0-50 and one a100 busy 0-80, started by the
	// first cycle, at 0. Then 4 (1g.10gb), 5 (a100) and 6 (1g.10gb) queue
	// at 1, 2 and 3. At 50 two slots free: the main scheduler starts 4 and
	// stops at 5, whose a100 is busy, though 6 could use the other 1g.10gb
	// slot. 5 starts at 80, when its a100 frees. 6 starts at backfill's
	// next cycle: at 60 with Slurm's 30 s (the last at 30); with a 100 s
	// interval the main scheduler starts it at 80, right after 5; planned
	// at every event, at 50.
	jobs := []Job{
		job(1, 0, "1g.10gb", 1, 50, 50),
		job(2, 0, "1g.10gb", 1, 50, 50),
		job(3, 0, "a100", 1, 80, 80),
		job(4, 1, "1g.10gb", 1, 50, 50),
		job(5, 2, "a100", 1, 50, 50),
		job(6, 3, "1g.10gb", 1, 50, 50),
	}
	slots := Slots{"1g.10gb": 2, "a100": 1}
	for _, c := range []struct {
		opt   Options
		start int64 // 6's
	}{{Options{}, 60}, {Options{BackfillIntervalS: 100}, 80}, {eachEvent, 50}} {
		r := replay(t, slots, jobs, c.opt)
		wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 0, 3: 0, 4: 50, 5: 80, 6: c.start})
	}
}

func TestBackfillWaitsForItsCycle(t *testing.T) {
	// blocked's queue: 1 holds one of two a100 0-100; 2 asks both at 10,
	// reserved from 100; 3 asks one at 20. The main scheduler stops at 2;
	// backfill's cycle at 30 (the first ran at 0) starts 3 where its limit
	// ends it by 100: with 60, at 30. With 80 it would have fitted at 20,
	// its submission, but not at 30: it waits for 2, and starts when 2
	// ends, at 150.
	for limit, want := range map[int64]map[int64]int64{
		60: {1: 0, 2: 100, 3: 30},
		80: {1: 0, 2: 100, 3: 150},
	} {
		jobs := blocked(limit, limit)
		r := replay(t, Slots{"a100": 2}, jobs, Options{})
		wantStarts(t, r, jobs, want)
	}
}

func TestCyclesRestartAfterAQuietSpell(t *testing.T) {
	// One a100 and one 1g.10gb slot. 1 holds the a100 0-200; nothing
	// happens until 50, when 2 asks the a100: more than 30 s after the
	// first cycle (0), the next runs at once, at 50, not at 30 or 60. 3
	// asks the free 1g.10gb slot at 70, behind 2: the main scheduler stops
	// at 2, and the cycle due 30 s after 50 starts 3 at 80 (not at 90, as
	// cycles every 30 s from 0 would). At 200 1 ends and 2 starts.
	jobs := []Job{
		job(1, 0, "a100", 1, 300, 200),
		job(2, 50, "a100", 1, 300, 10),
		job(3, 70, "1g.10gb", 1, 300, 10),
	}
	r := replay(t, Slots{"a100": 1, "1g.10gb": 1}, jobs, Options{})
	wantStarts(t, r, jobs, map[int64]int64{1: 0, 2: 200, 3: 80})
}

func TestBackfillIntervalOptions(t *testing.T) {
	for _, c := range []struct {
		opt  Options
		want int64
	}{{Options{}, DefaultBackfillIntervalS}, {Options{BackfillIntervalS: 45}, 45}, {Options{BackfillIntervalS: -7}, -1}} {
		if got := c.opt.resolve().interval; got != c.want {
			t.Errorf("%+v: interval %d, want %d", c.opt, got, c.want)
		}
	}
}
