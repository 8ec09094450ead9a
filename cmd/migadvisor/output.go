package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/migadvisor/migadvisor/advisor/collect"
	"github.com/migadvisor/migadvisor/advisor/outcome"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
)

func jsonFlag() cli.Flag { return &cli.BoolFlag{Name: "json", Usage: "print JSON instead of text"} }

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// isTTY reports whether w is a terminal: hints and confirmations are printed
// only then, so scripts and pipes get data alone.
func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// formatNumber prints a rate without needless decimals (3, 2.5, 0.333).
func formatNumber(x float64) string {
	if x == math.Trunc(x) {
		return fmt.Sprintf("%d", int64(x))
	}
	return fmt.Sprintf("%.3g", x)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// sayEmptyTo answers with nothing to show, and says why: an empty answer
// is never silent. In text the sentence stands where the table would; in
// JSON stdout holds the data alone (empty, an array, never null), and the
// sentence goes to stderr, as track's notes do.
func sayEmptyTo(w outWriters, asJSON bool, why string) error {
	if !asJSON {
		_, err := fmt.Fprintln(w.Out, why)
		return err
	}
	if err := writeJSON(w.Out, []struct{}{}); err != nil {
		return err
	}
	fmt.Fprintf(w.Err, "migadvisor: %s\n", why)
	return nil
}

// showPushProgress draws a bar of the rows sent to the site store on a
// terminal; nil elsewhere.
func showPushProgress(stderr io.Writer) func(sent, total int) {
	return showProgress(stderr, "sending to the site store")
}

// showProgress draws a bar of a long step's progress on a terminal; nil
// elsewhere (a cron job's mail stays clean).
func showProgress(stderr io.Writer, what string) func(done, total int) {
	if !isTTY(stderr) {
		return nil
	}
	var bar *progressbar.ProgressBar
	return func(done, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription(what),
				progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(200*time.Millisecond))
		}
		_ = bar.Set(done)
		if done >= total {
			_ = bar.Finish()
		}
	}
}

// why is a row's explanation for a table: "-" while it runs or once it completed.
func why(r jobStatus) string {
	if r.Outcome == "" || r.Outcome == outcome.Completed {
		return "-"
	}
	return r.Explanation
}

// interrupted turns an error of a wait that Ctrl-C (or SIGTERM) cut short
// into the sentence the user needs, what still goes on and how to take it
// up, and exit status 130. Other errors pass as they are. A Slurm command
// killed by the same Ctrl-C fails with its own error: the context, not the
// error, says what happened.
func interrupted(ctx context.Context, stderr io.Writer, err error, what string) error {
	if ctx.Err() == nil {
		return err
	}
	fmt.Fprintf(stderr, "migadvisor: interrupted; %s\n", what)
	return silentExit(exitInterrupted)
}

// lintFailure prints the lint errors that refused a sweep, and says what
// to do (hint); a profile the site lacks is a usage error; other errors
// pass as they are.
func lintFailure(stderr io.Writer, err error, path, hint string) error {
	var lintErr *bench.LintError
	var unknown *catalog.UnknownProfileError
	switch {
	case errors.As(err, &unknown):
		return usageError{"--profiles: " + err.Error()}
	case !errors.As(err, &lintErr):
		return err
	}
	fmt.Fprintln(stderr, lintErr.Error())
	return fmt.Errorf("%s has errors a variant would keep; %s", path, hint)
}

// queueBar is wait's bar for a loop that waits in steps (a probe's rungs,
// a suite): on a terminal only, drawn at the first look at the queue and
// taken off once every job is done, before collect's lines.
type queueBar struct {
	w   io.Writer
	tty bool
	bar *waitBar
}

func (b *queueBar) show(s bench.QueueState) {
	if !b.tty {
		return
	}
	if b.bar == nil {
		bar := newWaitBar(b.w, s.Total)
		b.bar = &bar
	}
	b.bar.show(s)
	if s.Done == s.Total {
		b.finish()
	}
}

// finish takes the bar off the terminal.
func (b *queueBar) finish() {
	if b.bar != nil {
		b.bar.Finish()
		b.bar = nil
	}
}

// waitBar is wait's progress on a terminal: jobs ended of those waited for.
type waitBar struct{ *progressbar.ProgressBar }

func newWaitBar(w io.Writer, total int) waitBar {
	return waitBar{progressbar.NewOptions(total, progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("waiting for jobs"), progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true), progressbar.OptionClearOnFinish())}
}

// show moves the bar to what the queue showed. The count goes first:
// Describe draws the bar, and a count set just after a draw would wait for
// the next one (it sat at 0/4 until the end).
func (b waitBar) show(s bench.QueueState) {
	_ = b.Set(s.Done)
	b.Describe(fmt.Sprintf("waiting: %d pending, %d running", s.Pending, s.Running))
}

// showImportProgress counts the jobs imported on a terminal's stderr (a
// whole cluster's accounting takes a while); the function it returns clears
// the count, once however often it is called.
func showImportProgress(stderr io.Writer, col *collect.Collector) (done func()) {
	if !isTTY(stderr) {
		return func() {}
	}
	bar := progressbar.NewOptions(-1, progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription("importing accounting"), progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(200*time.Millisecond))
	col.Progress = func(jobs int) { _ = bar.Add(jobs) }
	finished := false
	return func() {
		if !finished {
			finished = true
			_ = bar.Finish()
		}
	}
}

// notInAccountingYet says that submissions through the wrapper are not
// listed because slurmdbd has no job of theirs yet.
func notInAccountingYet(n int) string {
	return fmt.Sprintf("%s through the sbatch wrapper not in Slurm's accounting yet", textutil.Plural(n, "submission"))
}
