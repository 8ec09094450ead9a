package main

import (
	"fmt"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/store"
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
wait re-reads accounting until the real one is there.

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
		if isTTY(c.App.ErrWriter) {
			fmt.Fprintln(c.App.ErrWriter, "migadvisor: no tracked job to wait for")
		}
		return nil
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
	tracked, err := st.Tracked(c.Context, store.TrackedFilter{})
	if err != nil {
		return nil, err
	}
	return store.Unended(tracked), nil
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

// collectAfterWait imports the ended jobs' final records and their output evidence.
func collectAfterWait(c *cli.Context, ids []string) error {
	tracked, err := collectEnded(c, ids)
	if err != nil {
		return err
	}
	return printEnded(c, tracked)
}

// collectEnded imports the final records of ended jobs and scans their outputs.
func collectEnded(c *cli.Context, ids []string) ([]store.Tracked, error) {
	col, err := openCollector(c)
	if err != nil {
		return nil, err
	}
	defer col.Store.Close()
	if col.Cluster == "" {
		if col.Cluster, err = resolveCluster(c); err != nil {
			return nil, err
		}
	}
	// The wrapper's records carry no cluster name: they take it here, or
	// their jobs' records would never be linked to them.
	if err := col.Store.AdoptSubmissions(c.Context, col.Cluster); err != nil {
		return nil, err
	}
	open, err := col.WaitFinal(c.Context, ids, 20*time.Second)
	if err != nil {
		return nil, err
	}
	if len(open) > 0 {
		fmt.Fprintf(c.App.ErrWriter, "migadvisor: accounting has no final record yet for job %v; run 'migadvisor collect' later\n", open)
	}
	if _, err := col.ScanOutputs(c.Context, c.StringSlice("outputs"), nil); err != nil {
		return nil, err
	}
	return col.Store.Tracked(c.Context, store.TrackedFilter{JobIDs: ids})
}

func printEnded(c *cli.Context, tracked []store.Tracked) error {
	rows := make([]jobStatus, 0, len(tracked))
	for _, t := range tracked {
		rows = append(rows, statusOf(t, nil, true))
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, rows)
	}
	t := newTable(c.App.Writer)
	fmt.Fprintln(t, "JOB ID\tPROFILE\tSTATE")
	for _, r := range rows {
		fmt.Fprintf(t, "%s\t%s\t%s\n", r.JobID, orDash(r.Profile), r.State)
	}
	return t.Flush()
}
