package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:        "status",
		Usage:       "list tracked jobs and their states",
		ArgsUsage:   "[JOBID...]",
		Description: strings.ReplaceAll(helpText("status"), "{{recentWindow}}", recentWindowText),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "sweep", Usage: "only the jobs of the sweep in this directory"},
			&cli.BoolFlag{Name: "all", Usage: "also the jobs that ended more than " + recentWindowText + " ago"},
			slurmBinFlag(),
			jsonFlag(),
		},
		Action: bindAction(statusOptionsFrom, runStatus),
	}
}

// jobStatus is one tracked submission in status's and wait's output.
type jobStatus = bench.JobStatus

// statusOptions are status's flags and arguments.
type statusOptions struct {
	Global   globalFlags
	Slurm    slurmFlags
	ids      []string
	sweep    string // --sweep, as given
	sweepAbs string // and absolute, as the history holds it
	all      bool
	json     bool
	now      time.Time // what bench.RecentWindow is counted back from
}

func statusOptionsFrom(c *cli.Context) (statusOptions, error) {
	opt := statusOptions{Global: globalFlagsFrom(c), Slurm: slurmFlagsFrom(c), ids: c.Args().Slice(), sweep: c.String("sweep"),
		all: c.Bool("all"), json: c.Bool("json"), now: time.Now()}
	if err := collect.CheckJobIDs(opt.ids); err != nil {
		return opt, usageError{"status: " + err.Error()}
	}
	if opt.sweep != "" {
		abs, err := filepath.Abs(opt.sweep)
		if err != nil {
			return opt, fmt.Errorf("--sweep %s: %w", opt.sweep, err)
		}
		opt.sweepAbs = abs
	}
	return opt, nil
}

// recentWindowText is bench.RecentWindow in words: "7 days".
var recentWindowText = textutil.Plural(int(bench.RecentWindow/(24*time.Hour)), "day")

func runStatus(ctx context.Context, opt statusOptions, w outWriters) error {
	env := newEnv(opt.Global, opt.Slurm, w)
	waiting := 0
	if len(opt.ids) == 0 && opt.sweep == "" {
		waiting = findPending(ctx, env, 0)
	}
	st, err := env.openHistory(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	site, err := env.site()
	if err != nil {
		site = nil // the explanations only lose the profiles' usable memory
	}
	res, err := bench.Status(ctx, bench.StatusQuery{JobIDs: opt.ids, SweepDir: opt.sweepAbs, All: opt.all, Now: opt.now, Site: site},
		bench.StatusDeps{Slurm: statusSlurm{env.client()}, History: st})
	if err != nil {
		return err
	}
	if res.QueueErr != nil {
		env.say(fmt.Sprintf("warning: states from the history only: %v", res.QueueErr))
	}
	switch {
	case len(res.Rows) == 0 && res.Tracked > 0:
		return sayEmptyTo(env.outWriters, opt.json, fmt.Sprintf("no tracked job in the history at %s has run in the last %s; 'migadvisor status --all' lists the %s that ended before",
			st.Path(), recentWindowText, textutil.Plural(res.Left, "job")))
	case len(res.Rows) == 0 && waiting > 0:
		// One thing to say: the jobs are on their way, not missing.
		return sayEmptyTo(env.outWriters, opt.json, fmt.Sprintf("no tracked jobs to list yet: %s; run 'migadvisor status' again in a minute",
			collect.NotInAccountingYet(waiting)))
	case len(res.Rows) == 0:
		return sayEmptyTo(env.outWriters, opt.json, history.WhyNoneTracked(st.Path(), opt.ids, opt.sweep))
	}
	if waiting > 0 {
		env.say(collect.NotInAccountingYet(waiting) + ": not listed")
	}
	if err := printStatus(env.Out, opt.json, res.Rows); err != nil {
		return err
	}
	if res.Left > 0 {
		fmt.Fprintf(env.Err, "migadvisor: %s that ended more than %s ago not listed; 'migadvisor status --all' lists them\n", textutil.Plural(res.Left, "job"), recentWindowText)
	}
	return nil
}

// statusSlurm is Slurm as status asks it: squeue, and accounting for the
// ids that squeue does not show.
type statusSlurm struct{ *slurm.Client }

func (s statusSlurm) Lacks(ctx context.Context, ids []string) ([]string, error) {
	return collect.SlurmLacks(ctx, s.Client, ids)
}

func printStatus(w io.Writer, asJSON bool, rows []jobStatus) error {
	if asJSON {
		return writeJSON(w, rows)
	}
	wd := workingDir()
	t := newTable(w)
	fmt.Fprintln(t, "JOB ID\tPROFILE\tSTATE\tSCRIPT\tSWEEP\tSUBMITTED\tWHY")
	for _, r := range rows {
		state := r.State
		if r.Reason != "" && r.Reason != "None" {
			state += " (" + r.Reason + ")"
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.JobID, orDash(r.Profile), state, filepath.Base(r.Script),
			sweepLabel(r.SweepDir, wd), submittedText(r.Submitted), r.Why())
	}
	return t.Flush()
}

// sweepLabel tells the sweeps and probes of a status apart: the sweep's
// directory, from the working directory when it is under it; "-" for a
// job that no sweep submitted.
func sweepLabel(dir, wd string) string {
	if dir == "" {
		return "-"
	}
	if rel, err := filepath.Rel(wd, dir); err == nil && wd != "" && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return dir
}

// submittedText is when a job was submitted, "-" when the record has no
// time (a sweep.json without one): never year 1.
func submittedText(at time.Time) string {
	if at.IsZero() {
		return "-"
	}
	return at.Local().Format("2006-01-02 15:04")
}
