// Package replay replays a period's queue of GPU jobs on a layout of MIG
// slices as Slurm's scheduler would start them, so that a plan can compare
// layouts by the waits their jobs would have seen. It is pure: slots and
// jobs in, each job's start and end and each profile's waits and busy share
// out; profiles are names only.
//
// What of Slurm it models, for jobs that each ask one GRES type:
//
//   - Priority order: a job's priority is fixed (Job.Priority, higher
//     first); ties go to the earlier submission, then to the lower job id,
//     as Slurm's queue sorts them.
//   - The main scheduler, at every submission and every end: pending jobs
//     start in priority order while each fits the slots free now, and at
//     the first that does not, it stops. Slurm's stops there for the job's
//     partition, and the replay's layout is one partition: a job blocked on
//     one profile holds back the jobs behind it on every other, until
//     backfill's next cycle.
//   - sched/backfill, every bf_interval (Options.BackfillIntervalS,
//     Slurm's 30 s): the first cycle at the first submission, then one
//     bf_interval after the last while submissions and ends keep coming;
//     after a quiet spell, the next at the first submission or end, as
//     Slurm's backfill thread runs a cycle only once something changed. A
//     cycle is one plan: jobs start in priority order while they fit; a job
//     that cannot start gets a reservation at its earliest start, computed
//     from the running jobs' time limits (what the scheduler knows, not
//     their true runtimes), and a lower-priority job starts only where,
//     held until its own time limit, it takes no slot any reservation
//     needs. Every job tested gets one, as in Slurm's backfill, so a small
//     job delays no earlier job, not only the first one blocked.
//     Reservations last only their cycle, as Slurm's: between cycles the
//     main scheduler, stopping at the first job blocked, cannot break them.
//     A negative BackfillIntervalS plans at every submission and end
//     instead, an ideal scheduler that starts every job as soon as backfill
//     could.
//   - bf_max_job_test (Options.MaxJobTest, Slurm's 500): a job is tested
//     only while fewer than that many jobs ahead of it are pending, so a deep
//     queue of one profile starves another's free slots, as in Slurm.
//   - bf_window (Options.WindowS, Slurm's one day): past it nothing is
//     planned, so a job whose earliest start lies beyond it gets no
//     reservation, reservations end at it, and a longer job is checked only
//     up to it.
//   - A job runs its true runtime, ended at its time limit if longer
//     (OverTimeLimit=0), on Count slots of its profile at once; a slot runs
//     one job at a time.
//
// What it does not model, and which way each leans:
//
//   - Nodes. A slot is a slice anywhere: a job of several slots takes any
//     free ones of its profile, where Slurm places a --gres request on one
//     node; and a reservation holds only the slots it needs, where Slurm's
//     backfill reserves whole nodes (every slice of them) for a pending job,
//     so that a job of another profile on that node must end before the
//     reservation starts. Both make the replay's waits lower than Slurm's
//     around multi-GPU jobs and beside blocked jobs, most where nodes are
//     few.
//   - bf_resolution (60 s) and Slurm's own delays: times are exact seconds,
//     and a job starts at the very second the end or cycle that lets it
//     happens, where Slurm takes a fraction of a second to free a slot and
//     start the next; in a queue of seconds-long jobs these add up, and the
//     replay's waits come out a few seconds short.
//   - Planned at every event (a negative BackfillIntervalS), a profile is
//     planned again only at an event of its own or when jobs ahead of one
//     of its jobs start; where a reservation reaching past bf_window would
//     move at Slurm's next cycle, the replay waits for that profile's next
//     event. With cycles, every profile is planned afresh at each.
//   - bf_max_job_test counts the jobs ahead still pending when a job is
//     tested; Slurm counts every job a cycle tests, started ones too, and its
//     next cycle starts again from the top: the replay is that cycle's
//     limit.
//   - Partitions (the layout is one), priority that changes with age or
//     fairshare, QoS and association limits, bf_max_job_user and the like,
//     bf_min_age_reserve, preemption, dependencies, held jobs, node
//     failures, prolog and epilog time, and a node's CPUs and memory.
package replay

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Slots counts the slices of each profile a layout offers. Four GPUs cut
// 3g.40gb+2g.20gb+1g.10gb+1g.10gb and two whole ones:
//
//	Slots{}.Add(4, "3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb").Add(2, "7g.80gb")
type Slots map[string]int

// Add adds n GPUs, each cut into the profiles named (a whole GPU names one).
func (s Slots) Add(n int, profiles ...string) Slots {
	for _, p := range profiles {
		s[p] += n
	}
	return s
}

// Job is one job of the queue. Times are seconds on any clock the queue
// shares (Unix seconds from sacct, say).
type Job struct {
	ID       int64  // Slurm's job id: breaks ties of priority and submission
	Submit   int64  // when it was submitted
	Priority int64  // higher starts first; all 0: submission order
	Profile  string // the one GRES type it asks
	Count    int    // how many slots of Profile it needs at once, at least 1
	LimitS   int64  // its time limit, the scheduler's bound; more than 0
	RuntimeS int64  // how long it truly runs, ended at LimitS if longer
}

// Options are the backfill parameters the replay models, Slurm's
// SchedulerParameters of the same names. The zero value is Slurm's defaults.
type Options struct {
	// MaxJobTest is bf_max_job_test: how many pending jobs ahead of a job
	// leave it untested. 0: DefaultMaxJobTest; negative: no bound.
	MaxJobTest int
	// WindowS is bf_window in seconds: how far ahead reservations are
	// planned. 0: DefaultWindowS; negative: no bound.
	WindowS int64
	// BackfillIntervalS is bf_interval in seconds: how long after a backfill
	// cycle the next one may run; between them only the main scheduler
	// starts jobs. 0: DefaultBackfillIntervalS; negative: backfill plans at
	// every submission and end.
	BackfillIntervalS int64
}

// Slurm's defaults (src/plugins/sched/backfill/backfill.c).
const (
	DefaultMaxJobTest        = 500
	DefaultWindowS           = 24 * 60 * 60
	DefaultBackfillIntervalS = 30
)

// Result is what the replay found.
type Result struct {
	Jobs     []Placement    // one per job, in the input's order
	Profiles []ProfileStats // one per profile of the slots or the jobs, by name
	Unplaced []Unplaced     // jobs no slots of the layout can hold, in the input's order
	// FromS and ToS bound the replay: the first submission of a placed job
	// and the last end. The busy shares are of this span.
	FromS, ToS int64
}

// Placement is when one job ran.
type Placement struct {
	Placed     bool  // false: the layout cannot hold it (see Result.Unplaced)
	Start, End int64 // on the jobs' clock
	WaitS      int64 // Start - Submit
}

// ProfileStats sums up one profile's jobs and slots.
type ProfileStats struct {
	Profile  string
	Slots    int
	Jobs     int // jobs placed
	Unplaced int // jobs of the profile the layout cannot hold
	// P50WaitS and P95WaitS are nearest-rank percentiles of its placed
	// jobs' waits: the least wait that many of them waited no longer than.
	P50WaitS, P95WaitS int64
	BusySlotS          int64   // slot-seconds its slots ran jobs
	Busy               float64 // BusySlotS over Slots × (ToS − FromS); 0 without slots or span
}

// Unplaced is a job the layout can never hold.
type Unplaced struct {
	Job int   // its index in the input
	ID  int64 // its job id
	Why string
}

// Replay runs the queue on slots. It fails only on input that cannot
// describe a job (no time limit, no slot asked, a negative runtime) or a
// layout with a negative count; a job the layout cannot hold is listed in
// Unplaced, never dropped.
func Replay(slots Slots, jobs []Job, opt Options) (Result, error) {
	return new(Replayer).Replay(slots, jobs, opt)
}

// A Replayer replays queue after queue in the memory of the last, as
// Replay replays one: a search that replays a year of a large site on
// layout after layout allocates its memory once. The Result of a replay
// is good until the Replayer's next (its Jobs are the Replayer's). The
// zero value is ready; it is not for several goroutines at once.
type Replayer struct{ last *sched }

// Replay is Replay in r's memory.
func (r *Replayer) Replay(slots Slots, jobs []Job, opt Options) (Result, error) {
	if err := validate(slots, jobs); err != nil {
		return Result{}, err
	}
	s := newSched(r.last, slots, jobs, opt.resolve())
	s.run()
	res := s.result()
	s.mem.ends = s.ends[:0]
	r.last = s
	return res, nil
}

func validate(slots Slots, jobs []Job) error {
	for p, n := range slots {
		if n < 0 {
			return fmt.Errorf("replay: %d slots of %s", n, p)
		}
	}
	for i := range jobs {
		j := &jobs[i]
		switch {
		case j.Count < 1:
			return fmt.Errorf("replay: job %d asks %d slots", j.ID, j.Count)
		case j.LimitS <= 0:
			return fmt.Errorf("replay: job %d has time limit %d s", j.ID, j.LimitS)
		case j.RuntimeS < 0:
			return fmt.Errorf("replay: job %d has runtime %d s", j.ID, j.RuntimeS)
		}
	}
	return nil
}

// limits are Options resolved: depth < 0 is no bound, window is in seconds
// and math.MaxInt64 for none, interval < 0 is backfill at every event.
type limits struct {
	depth    int
	window   int64
	interval int64
}

func (o Options) resolve() limits {
	l := limits{depth: o.MaxJobTest, window: o.WindowS, interval: o.BackfillIntervalS}
	switch {
	case l.interval == 0:
		l.interval = DefaultBackfillIntervalS
	case l.interval < 0:
		l.interval = -1
	}
	switch {
	case l.depth == 0:
		l.depth = DefaultMaxJobTest
	case l.depth < 0:
		l.depth = -1
	}
	switch {
	case l.window == 0:
		l.window = DefaultWindowS
	case l.window < 0:
		l.window = math.MaxInt64
	}
	return l
}

// after is t+d, held at math.MaxInt64 where an unbounded window would
// overflow.
func after(t, d int64) int64 {
	if d > math.MaxInt64-t {
		return math.MaxInt64
	}
	return t + d
}

// priorityOrder sorts job indices as Slurm's queue does: priority, then
// submission, then job id; the input's order last, so that equal jobs keep
// one order every run.
func priorityOrder(jobs []Job, idx []int32) {
	slices.SortFunc(idx, func(a, b int32) int {
		ja, jb := &jobs[a], &jobs[b]
		return cmp.Or(cmp.Compare(jb.Priority, ja.Priority), cmp.Compare(ja.Submit, jb.Submit),
			cmp.Compare(ja.ID, jb.ID), cmp.Compare(a, b))
	})
}
