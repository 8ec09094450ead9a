package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/slurm"
)

func waitCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "wait",
		Usage:     "wait until tracked jobs end, then collect their records",
		ArgsUsage: "[JOBID...]",
		Description: `Waits until the jobs (default: every tracked job that has not ended; with
--sweep, the jobs of that sweep) have left the queue, polling squeue with a
growing interval, then collects their accounting records and output evidence.
For a job shorter than a few seconds slurmdbd first shows a placeholder record;
wait re-reads accounting until the real one is there. An id that neither
squeue nor sacct knows is said at once ("Slurm has no job 99999: was the id
mistyped?"), not waited for.

Then prints each job's final state and, for a job that did not complete, why,
in one sentence with its figures (WHY; --json: "outcome" and "explanation"):
a GPU OOM and the memory it needed, a host OOM, the time limit, a command not
found (exit 127), an output directory that does not exist (exit 0:53), a
cancel or a node failure, or the exit code.

Shows progress on a terminal; prints nothing while waiting otherwise.
Exit status 1 if --timeout passes first.

Examples:
   migadvisor wait --sweep sweep/
   migadvisor wait 4242 4243 --timeout 2h
   migadvisor wait && migadvisor history job.sh`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "sweep", Usage: "wait for the jobs of the sweep in this directory"},
			&cli.DurationFlag{Name: "timeout", Usage: "give up after this long (0: never)"},
			&cli.DurationFlag{Name: "poll", Value: 15 * time.Second, Usage: "longest interval between squeue calls"},
			&cli.BoolFlag{Name: "no-collect", Usage: "only wait; do not collect the records"},
			&cli.StringSliceFlag{Name: "outputs", Usage: "directory with job output files, for the collect that follows (repeatable)"},
			clusterFlag(),
			slurmBinFlag(),
			jsonFlag(),
		},
		Action: runWait,
	})
}

func runWait(c *cli.Context) error {
	ids, err := waitIDs(c)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		// Never silent: nothing is pending, or nothing is tracked at all.
		fmt.Fprintf(c.App.ErrWriter, "migadvisor: no tracked job is waiting to end (see 'migadvisor status'); %s\n", howTracked)
		return nil
	}
	if c.NArg() > 0 {
		if err := noteUntracked(c, ids); err != nil {
			return err
		}
	}
	if err := waitQueue(c, ids); err != nil {
		return err
	}
	if c.Bool("no-collect") {
		return nil
	}
	return collectAfterWait(c, ids)
}

// waitIDs are the jobs named on the command line, of --sweep, or every tracked job not ended.
// noteUntracked says which of the jobs named on the command line no script
// is linked to: wait follows and collects them, but lists only tracked jobs.
func noteUntracked(c *cli.Context, ids []string) error {
	st, err := openHistory(c)
	if err != nil {
		return err
	}
	defer st.Close()
	tracked, err := st.Tracked(c.Context, history.TrackedFilter{JobIDs: ids})
	if err != nil {
		return err
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
	switch n := len(untracked); {
	case n == 1:
		fmt.Fprintf(c.App.ErrWriter, "migadvisor: job %s is not tracked: wait collects its record, but only 'migadvisor track JOB.sh %s' links it to a script and lists it here\n",
			untracked[0], untracked[0])
	case n > 1:
		fmt.Fprintf(c.App.ErrWriter, "migadvisor: %s are not tracked: wait collects their records, but only 'migadvisor track JOB.sh %s' links them to a script and lists them here\n",
			jobsNamed(untracked), strings.Join(untracked, " "))
	}
	return nil
}

func waitIDs(c *cli.Context) ([]string, error) {
	if c.NArg() > 0 {
		return c.Args().Slice(), nil
	}
	if dir := c.String("sweep"); dir != "" {
		sw, err := bench.ReadSweep(dir)
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, p := range sw.Profiles {
			if id := sw.Variants[p].JobID; id != "" {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			return nil, fmt.Errorf("the sweep in %s was not submitted (run sweep with --submit)", dir)
		}
		return ids, nil
	}
	st, err := openHistory(c)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	tracked, err := st.Tracked(c.Context, history.TrackedFilter{})
	if err != nil {
		return nil, err
	}
	return history.Unended(tracked), nil
}

// waitQueue polls squeue, 1 s at first and then less often, until none of ids
// is queued or --timeout (from this call) passes.
func waitQueue(c *cli.Context, ids []string) error {
	var deadline time.Time
	if d := c.Duration("timeout"); d > 0 {
		deadline = time.Now().Add(d)
	}
	client := slurmClient(c)
	var bar *progressbar.ProgressBar
	if isTTY(c.App.ErrWriter) {
		bar = progressbar.NewOptions(len(ids), progressbar.OptionSetWriter(c.App.ErrWriter),
			progressbar.OptionSetDescription("waiting for jobs"), progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(200*time.Millisecond))
		defer bar.Finish()
	}
	delay := time.Second
	for {
		queued, err := client.Queue(c.Context, ids)
		if err != nil {
			return err
		}
		// squeue keeps ended jobs for MinJobAge; they no longer count.
		active, running := 0, 0
		for _, q := range queued {
			if !slurm.TerminalState(q.State) {
				active++
			}
			if q.State == "RUNNING" {
				running++
			}
		}
		if bar != nil {
			bar.Describe(fmt.Sprintf("waiting: %d pending, %d running", active-running, running))
			_ = bar.Set(max(len(ids)-active, 0))
		}
		if active == 0 {
			return nil
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return fmt.Errorf("%d jobs still queued after --timeout %s", active, c.Duration("timeout"))
		}
		select {
		case <-c.Context.Done():
			return c.Context.Err()
		case <-time.After(delay):
		}
		delay = min(delay*3/2, max(c.Duration("poll"), time.Second))
	}
}

// collectAfterWait imports the ended jobs' final records and their output
// evidence, and prints how each ended.
func collectAfterWait(c *cli.Context, ids []string) error {
	tracked, unknown, err := collectEndedOrUnknown(c, ids)
	if err != nil {
		return err
	}
	outcomes, err := explainTracked(c, tracked)
	if err != nil {
		return err
	}
	return printEnded(c, tracked, outcomes, unknown)
}

// explainTracked explains how the ended jobs of the submissions went, from
// the history.
func explainTracked(c *cli.Context, tracked []history.Tracked) (map[[2]string]advisor.Outcome, error) {
	site, err := loadSite(c)
	if err != nil {
		return nil, err
	}
	st, err := openHistory(c)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return explainEnded(c, st, site, tracked)
}

// collectEnded imports the final records of ended jobs and scans their outputs.
func collectEnded(c *cli.Context, ids []string) ([]history.Tracked, error) {
	tracked, _, err := collectEndedOrUnknown(c, ids)
	return tracked, err
}

// collectEndedOrUnknown is collectEnded that also lists the ids Slurm has
// no job of, which it says on stderr.
func collectEndedOrUnknown(c *cli.Context, ids []string) ([]history.Tracked, []string, error) {
	col, err := openCollector(c)
	if err != nil {
		return nil, nil, err
	}
	defer col.Store.Close()
	// The wrapper's records carry no cluster name: they take it here, or
	// their jobs' records would never be linked to them.
	if err := nameCluster(c, col); err != nil {
		return nil, nil, err
	}
	open, unknown, err := col.WaitFinal(c.Context, ids, 20*time.Second)
	if err != nil {
		return nil, nil, err
	}
	if _, err := col.FileTogether(c.Context); err != nil {
		return nil, nil, err
	}
	if len(unknown) > 0 {
		fmt.Fprintf(c.App.ErrWriter, "migadvisor: %s\n", slurmHasNo(unknown))
	}
	if len(open) > 0 {
		fmt.Fprintf(c.App.ErrWriter, "migadvisor: accounting has no final record yet for %s; run 'migadvisor collect' later\n", jobsNamed(open))
	}
	if _, err := col.ScanOutputs(c.Context, c.StringSlice("outputs"), nil); err != nil {
		return nil, nil, err
	}
	tracked, err := col.Store.Tracked(c.Context, history.TrackedFilter{JobIDs: ids})
	return tracked, unknown, err
}

// printEnded prints each job's final state and, when it did not complete, why.
func printEnded(c *cli.Context, tracked []history.Tracked, outcomes map[[2]string]advisor.Outcome, unknown []string) error {
	rows := make([]jobStatus, 0, len(tracked))
	for _, t := range tracked {
		rows = append(rows, statusOf(t, nil, true, outcomes, unknown))
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, rows)
	}
	if len(rows) == 0 {
		return nil // untracked or unknown ids: said on stderr already, a bare header says nothing
	}
	t := newTable(c.App.Writer)
	fmt.Fprintln(t, "JOB ID\tPROFILE\tSTATE\tWHY")
	for _, r := range rows {
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\n", r.JobID, orDash(r.Profile), r.State, why(r))
	}
	return t.Flush()
}
