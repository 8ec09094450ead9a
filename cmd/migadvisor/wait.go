package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

func waitCommand() *cli.Command {
	return &cli.Command{
		Name:        "wait",
		Usage:       "wait until tracked jobs end, then collect their records",
		ArgsUsage:   "[JOBID...]",
		Description: helpText("wait"),
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "sweep", Usage: "wait for the jobs of the sweep in this directory"},
		}, waitFlags("")...),
			&cli.BoolFlag{Name: "no-collect", Usage: "only wait; do not collect the records"},
			&cli.StringSliceFlag{Name: "outputs", Usage: "directory with job output files, for the collect that follows (repeatable)"},
			clusterFlag(),
			slurmBinFlag(),
			jsonFlag(),
		),
		Action: bindAction(waitOptionsFrom, runWait),
	}
}

// waitOptions are wait's flags and arguments.
type waitOptions struct {
	Global    globalFlags
	Slurm     slurmFlags
	ids       []string // named on the command line
	sweep     string   // --sweep, as given
	wait      bench.WaitOptions
	noCollect bool
	outputs   []string
	json      bool
}

// addsRuns: wait collects the jobs that ended, unless told not to.
func (o waitOptions) addsRuns() bool { return !o.noCollect }

func waitOptionsFrom(c *cli.Context) (waitOptions, error) {
	timing, err := waitTimingFrom(c)
	o := waitOptions{Global: globalFlagsFrom(c), Slurm: slurmFlagsFrom(c), ids: c.Args().Slice(), sweep: c.String("sweep"), wait: timing,
		noCollect: c.Bool("no-collect"), outputs: c.StringSlice("outputs"), json: c.Bool("json")}
	if err == nil {
		if idErr := collect.CheckJobIDs(o.ids); idErr != nil {
			err = usageError{"wait: " + idErr.Error()}
		}
	}
	return o, err
}

func runWait(ctx context.Context, opt waitOptions, w outWriters) error {
	env := newEnv(opt.Global, opt.Slurm, w)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(opt.ids) == 0 && opt.sweep == "" {
		if waiting := findPending(ctx, env, pendingPatience); waiting > 0 && ctx.Err() == nil {
			fmt.Fprintf(env.Err, "migadvisor: %s: not listed\n", collect.NotInAccountingYet(waiting))
		}
	}
	ids, err := bench.WaitTargets(ctx, bench.WaitQuery{IDs: opt.ids, SweepDir: opt.sweep}, env.perCall())
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		// Never silent: nothing is pending, or nothing is tracked at all
		// (with --json, stdout holds the data alone: an empty array).
		fmt.Fprintf(env.Err, "migadvisor: no tracked job is waiting to end (see 'migadvisor status'); %s\n", history.HowTracked)
		if opt.json {
			return writeJSON(env.Out, []bench.JobStatus{})
		}
		return nil
	}
	var untracked []string
	if len(opt.ids) > 0 && !opt.noCollect {
		if untracked, err = bench.Untracked(ctx, env.perCall(), ids); err != nil {
			return err
		}
	}
	if err := waitForJobs(ctx, env, ids, opt.wait); err != nil {
		if opt.json && ctx.Err() == nil {
			printStillWaiting(ctx, env, ids)
		}
		return interrupted(ctx, env.Err, err, "the jobs still run in Slurm: '"+resumeWait(opt)+"' waits for them again")
	}
	if opt.noCollect {
		if opt.json { // out of the queue, their records not read: as status says them
			rows := make([]bench.JobStatus, 0, len(ids))
			for _, id := range ids {
				rows = append(rows, bench.JobStatus{JobID: id, State: bench.StateCollect, Jobs: []bench.JobStateRow{}})
			}
			return writeJSON(env.Out, rows)
		}
		return nil
	}
	ended, err := collectAndExplain(ctx, env, ids, opt.outputs)
	if err != nil {
		return interrupted(ctx, env.Err, err, "the jobs have ended, but not all their records are collected: 'migadvisor collect' reads them")
	}
	noteUntracked(env.Err, without(untracked, ended.Unknown))
	if err := printEnded(env.Out, opt.json, ended); err != nil {
		return err
	}
	return namedUnknown(opt.ids, ended.Unknown)
}

// namedUnknown fails a wait for an id given on its command line that Slurm
// has no job of: 'wait $ID && recommend job.sh' must not go on from a
// mistyped id (collectAndExplain said which). Tracked ids a plain wait
// found are the history's, and do not fail it.
func namedUnknown(named, unknown []string) error {
	for _, id := range named {
		if slices.Contains(unknown, id) {
			return silentExit(exitFailure)
		}
	}
	return nil
}

// without is ids less those in drop.
func without(ids, drop []string) []string {
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return slices.Contains(drop, id) })
}

// pendingPatience is how long wait gives a job submitted through the shim
// a moment ago to reach accounting.
const pendingPatience = 15 * time.Second

// resumeWait is the wait command that takes this one up again.
func resumeWait(opt waitOptions) string {
	switch {
	case opt.sweep != "":
		return "migadvisor wait --sweep " + slurm.ShellWord(opt.sweep)
	case len(opt.ids) > 0:
		words := make([]string, len(opt.ids))
		for i, id := range opt.ids {
			words[i] = slurm.ShellWord(id)
		}
		return "migadvisor wait " + strings.Join(words, " ")
	}
	return "migadvisor wait"
}

// noteUntracked says which of the jobs named on the command line no script
// is linked to: wait followed and collected them, but lists only tracked
// jobs. Ids Slurm has no job of are left out: there is no record to collect.
func noteUntracked(stderr io.Writer, untracked []string) {
	switch n := len(untracked); {
	case n == 1:
		fmt.Fprintf(stderr, "migadvisor: job %s is not tracked: wait collects its record, but only 'migadvisor track JOB.sh %s' links it to a script and lists it here\n",
			untracked[0], untracked[0])
	case n > 1:
		fmt.Fprintf(stderr, "migadvisor: %s are not tracked: wait collects their records, but only 'migadvisor track JOB.sh %s' links them to a script and lists them here\n",
			textutil.JobsNamed(untracked, 0), strings.Join(untracked, " "))
	}
}

// waitForJobs waits until none of ids is queued, with a bar on a terminal.
func waitForJobs(ctx context.Context, env commandEnv, ids []string, opt bench.WaitOptions) error {
	bar := queueBar{w: env.Err, tty: isTTY(env.Err)}
	defer bar.finish()
	return bench.Waiter{Queue: env.client(), Progress: bar.show}.Wait(ctx, ids, opt)
}

// printStillWaiting prints, for --json, the jobs a wait that stopped early
// left in Slurm with their state, as status does: stdout holds the JSON
// whatever the wait's error, which follows on stderr.
func printStillWaiting(ctx context.Context, env commandEnv, ids []string) {
	site, err := env.site()
	if err != nil {
		site = nil // the profiles of untracked jobs only
	}
	rows, err := bench.StillWaiting(ctx, env.client(), env.perCall(), site, ids)
	if err != nil {
		env.say(fmt.Sprintf("warning: the jobs still waited for cannot be listed: %v", err))
		rows = []bench.JobStatus{}
	}
	writeJSON(env.Out, rows)
}

// printEnded prints each job's final state and, when it did not complete,
// why; an id Slurm has no job of is a row too, as status shows it.
func printEnded(w io.Writer, asJSON bool, ended bench.Ended) error {
	rows := make([]bench.JobStatus, 0, len(ended.Tracked)+len(ended.Unknown))
	live := bench.Live{OK: true, Unknown: ended.Unknown}
	for _, t := range ended.Tracked {
		rows = append(rows, bench.StatusOf(t, live, ended.Outcomes))
	}
	for _, id := range ended.Unknown {
		if !slices.ContainsFunc(ended.Tracked, func(t history.Tracked) bool { return t.JobID == id }) {
			rows = append(rows, bench.StatusOf(history.Tracked{Submission: history.Submission{JobID: id}}, live, ended.Outcomes))
		}
	}
	if asJSON {
		return writeJSON(w, rows)
	}
	if len(rows) == 0 {
		return nil // untracked ids: said on stderr already, a bare header says nothing
	}
	t := newTable(w)
	fmt.Fprintln(t, "JOB ID\tPROFILE\tSTATE\tWHY")
	for _, r := range rows {
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\n", r.JobID, orDash(r.Profile), r.State, r.Why())
	}
	return t.Flush()
}
