// Package progress draws the bars of long steps on a terminal, and nothing
// elsewhere: a cron job's mail and a pipe get the data alone.
package progress

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// throttle is how often the bars of fast steps are drawn at most.
const throttle = 200 * time.Millisecond

// OnTerminal reports whether w is a terminal.
func OnTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Steps draws on a terminal a bar of a long step's progress, described by
// what and taken off once done reaches total; nil elsewhere.
func Steps(w io.Writer, what string) func(done, total int) {
	if !OnTerminal(w) {
		return nil
	}
	var bar *progressbar.ProgressBar
	return func(done, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what),
				progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(throttle))
		}
		_ = bar.Set(done)
		if done >= total {
			_ = bar.Finish()
		}
	}
}

// Count counts on a terminal things done whose total is not known, with
// the time taken: add adds to the count, and finish takes it off, once
// however often it is called. Elsewhere add is nil and finish does nothing.
func Count(w io.Writer, what string) (add func(n int), finish func()) {
	if !OnTerminal(w) {
		return nil, func() {}
	}
	bar := progressbar.NewOptions(-1, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(), progressbar.OptionSetElapsedTime(true), progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(throttle))
	finished := false
	return func(n int) { _ = bar.Add(n) }, func() {
		if !finished {
			finished = true
			_ = bar.Finish()
		}
	}
}

// QueueState is what one look at the queue found of the jobs waited for.
type QueueState struct {
	Total   int // the jobs waited for
	Done    int
	Pending int
	Running int
}

// Queue is the bar of a wait for jobs: those ended of those waited for,
// with how many pend and run. It is drawn at the first Show and taken off
// once every job is done (or by Finish); a later Show draws a new one.
type Queue struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

// NewQueue is a wait's bar, to be drawn on w.
func NewQueue(w io.Writer) *Queue { return &Queue{w: w} }

// Show moves the bar to what the queue showed. The count goes first:
// Describe draws the bar, and a count set just after a draw would wait for
// the next one (it sat at 0/4 until the end).
func (q *Queue) Show(s QueueState) {
	if q.bar == nil {
		q.bar = progressbar.NewOptions(s.Total, progressbar.OptionSetWriter(q.w),
			progressbar.OptionSetDescription("waiting for jobs"), progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true), progressbar.OptionClearOnFinish())
	}
	_ = q.bar.Set(s.Done)
	q.bar.Describe(fmt.Sprintf("waiting: %d pending, %d running", s.Pending, s.Running))
	if s.Done == s.Total {
		q.Finish()
	}
}

// Finish takes the bar off the terminal, if one is drawn; a nil Queue has none.
func (q *Queue) Finish() {
	if q != nil && q.bar != nil {
		_ = q.bar.Finish()
		q.bar = nil
	}
}
