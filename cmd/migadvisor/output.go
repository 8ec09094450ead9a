package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/progress"
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
func isTTY(w io.Writer) bool { return progress.OnTerminal(w) }

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
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

// stoppable is ctx, cancelled by SIGTERM or Ctrl-C (SIGINT): a command that
// writes (collect, publish) then rolls back the transaction it is in and
// removes its unfinished files, rather than die in the middle of them. A
// second signal ends the process at once, as without it.
func stoppable(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
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

// queueBar is wait's bar (progress.Queue) on a terminal only, for a loop
// that waits: wait, a probe's rungs, a suite. It is taken off once every
// job is done, before collect's lines.
type queueBar struct {
	w   io.Writer
	tty bool
	bar *progress.Queue
}

func (b *queueBar) show(s bench.QueueState) {
	if !b.tty {
		return
	}
	if b.bar == nil {
		b.bar = progress.NewQueue(b.w)
	}
	b.bar.Show(progress.QueueState(s))
}

// finish takes the bar off the terminal.
func (b *queueBar) finish() { b.bar.Finish() }

// showImportProgress counts the jobs imported on a terminal's stderr (a
// whole cluster's accounting takes a while); the function it returns clears
// the count, once however often it is called.
func showImportProgress(stderr io.Writer, col *collect.Collector) (done func()) {
	col.Progress, done = progress.Count(stderr, "importing accounting")
	return done
}
