package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// Queue is what following jobs needs of Slurm: squeue's view of them.
// Jobs Slurm has forgotten are absent from its answer.
type Queue interface {
	Queue(ctx context.Context, ids []string) ([]slurm.QueuedJob, error)
}

// Clock tells the time and sleeps, so that tests of waiting run at once.
type Clock interface {
	Now() time.Time
	// Sleep returns after d, or ctx's error as soon as ctx is done.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the process's own clock.
type SystemClock struct{}

// Now is time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

// Sleep waits for d or for ctx to be done.
func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// WaitOptions say how long to wait and how often to ask.
type WaitOptions struct {
	Timeout time.Duration // give up after this long; 0: never
	Poll    time.Duration // the longest interval between squeue calls (at least a second)
}

// QueueState is what one look at the queue found of the jobs waited for,
// counted by submission (an array is one job until all its tasks end).
type QueueState struct {
	Total   int // the submissions waited for
	Done    int // out of the queue, or shown in a final state
	Pending int
	Running int
}

// TimeoutError is a wait that ran out of time with jobs still queued.
type TimeoutError struct {
	Queued int
	After  time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s still queued after --timeout %s", textutil.Plural(e.Queued, "job"), e.After)
}

// QueueError is a wait that squeue's failure cut short: the jobs it
// waited for are still in Slurm, running on whatever the wait knows.
type QueueError struct {
	Waiting int // the submissions waited for
	Err     error
}

func (e *QueueError) Error() string {
	return fmt.Sprintf("wait for %s: %v", textutil.Plural(e.Waiting, "job"), e.Err)
}

func (e *QueueError) Unwrap() error { return e.Err }

// StoppedWaiting reports whether err is a wait that stopped with jobs
// still in Slurm (*TimeoutError, *QueueError): they go on, and are
// charged, without it.
func StoppedWaiting(err error) bool {
	var timeout *TimeoutError
	var queue *QueueError
	return errors.As(err, &timeout) || errors.As(err, &queue)
}

// Waiter follows jobs in the queue.
type Waiter struct {
	Queue Queue
	Clock Clock // nil: SystemClock
	// Progress, when set, hears each look at the queue: a bar moves with it.
	Progress func(QueueState)
}

// firstPoll is how soon the queue is asked again at first: short jobs end
// within seconds, and the interval grows from there to WaitOptions.Poll.
const firstPoll = time.Second

// Wait polls the queue, every second at first and then less often, until
// none of ids is queued, the timeout (from this call) passes (*TimeoutError),
// or ctx is done (its error, wrapped).
func (w Waiter) Wait(ctx context.Context, ids []string, opt WaitOptions) error {
	clock := w.Clock
	if clock == nil {
		clock = SystemClock{}
	}
	var deadline time.Time
	if opt.Timeout > 0 {
		deadline = clock.Now().Add(opt.Timeout)
	}
	delay := firstPoll
	for {
		queued, err := w.Queue.Queue(ctx, ids)
		if err != nil {
			return &QueueError{Waiting: len(ids), Err: err}
		}
		state := queueState(ids, queued)
		if w.Progress != nil {
			w.Progress(state)
		}
		if state.Done == state.Total {
			return nil
		}
		if !deadline.IsZero() && !clock.Now().Before(deadline) {
			return &TimeoutError{Queued: state.Total - state.Done, After: opt.Timeout}
		}
		if err := clock.Sleep(ctx, delay); err != nil {
			return fmt.Errorf("wait for %s: %w", textutil.Plural(state.Total-state.Done, "job"), err)
		}
		delay = min(delay*3/2, max(opt.Poll, firstPoll))
	}
}

// queueState counts the submissions of ids by what squeue shows of their
// jobs. squeue keeps ended jobs for MinJobAge: they count as done. A
// submission runs while any of its jobs (an array's tasks) runs.
func queueState(ids []string, queued []slurm.QueuedJob) QueueState {
	active := map[string]string{} // submission -> PENDING or RUNNING
	for _, q := range queued {
		if slurm.TerminalState(q.State) {
			continue
		}
		id := SubmissionOf(q.ID)
		if active[id] != "RUNNING" {
			active[id] = q.State
		}
	}
	s := QueueState{Total: len(ids)}
	for _, id := range ids {
		switch st, ok := active[id]; {
		case !ok:
			s.Done++
		case st == "RUNNING":
			s.Running++
		default:
			s.Pending++
		}
	}
	return s
}

// SubmissionOf is the id sbatch printed for a job squeue shows: an array
// task's (4242_7) or a heterogeneous component's (4242+1) base id.
func SubmissionOf(queueID string) string {
	if i := strings.IndexAny(queueID, "_+"); i >= 0 {
		return queueID[:i]
	}
	return queueID
}

// QueueBySubmission groups squeue's jobs under the ids sbatch printed.
func QueueBySubmission(jobs []slurm.QueuedJob) map[string][]slurm.QueuedJob {
	live := map[string][]slurm.QueuedJob{}
	for _, j := range jobs {
		id := SubmissionOf(j.ID)
		live[id] = append(live[id], j)
	}
	return live
}

// SubmittedIDs are the job ids of a sweep's submitted variants, in profile order.
func SubmittedIDs(sw *Sweep) []string {
	var ids []string
	for _, p := range sw.Profiles {
		if id := sw.Variants[p].JobID; id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// TrackedReader reads the tracked submissions of the history.
type TrackedReader interface {
	Tracked(ctx context.Context, f history.TrackedFilter) ([]history.Tracked, error)
}

// WaitQuery names the jobs a wait follows.
type WaitQuery struct {
	IDs      []string // named by id
	SweepDir string   // else the submitted jobs of the sweep in this directory
}

// WaitTargets are the jobs a wait follows: those named, else the sweep's,
// else every tracked job that has not ended (the only case that reads h).
func WaitTargets(ctx context.Context, q WaitQuery, h TrackedReader) ([]string, error) {
	if len(q.IDs) > 0 {
		return q.IDs, nil
	}
	if q.SweepDir != "" {
		sweeps, err := ReadSweeps(q.SweepDir)
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, sw := range sweeps {
			ids = append(ids, SubmittedIDs(sw)...)
		}
		if len(ids) == 0 {
			return nil, fmt.Errorf("the sweep in %s was not submitted (run sweep with --submit)", q.SweepDir)
		}
		return ids, nil
	}
	tracked, err := h.Tracked(ctx, history.TrackedFilter{})
	if err != nil {
		return nil, err
	}
	return history.Unended(tracked), nil
}

// Untracked are the jobs of ids that no script is linked to in the
// history: a wait follows and collects them, but lists only tracked jobs.
func Untracked(ctx context.Context, h TrackedReader, ids []string) ([]string, error) {
	tracked, err := h.Tracked(ctx, history.TrackedFilter{JobIDs: ids})
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, t := range tracked {
		known[t.JobID] = true
	}
	var untracked []string
	for _, id := range ids {
		if !known[id] {
			untracked = append(untracked, id)
		}
	}
	return untracked, nil
}
