package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/advisor/joblist"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

func historyCommand() *cli.Command {
	return &cli.Command{
		Name:        "history",
		Usage:       "show the evidence per job: state, time, memory, OOMs, work, SU",
		ArgsUsage:   "[JOB.sh]",
		Description: helpText("history"),
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "limit", Value: 100, Usage: "show at most this many jobs (0: all)"},
			jsonFlag(),
		},
		Action: bindAction(historyOptionsFrom, runHistory),
	}
}

// historyOptions are history's flags.
type historyOptions struct {
	Global globalFlags
	Script string // "" for every job in the history
	Limit  int    // 0: all
	JSON   bool
	User   string // who asks: in the site-wide history only their jobs are earlier versions
}

func historyOptionsFrom(c *cli.Context) (historyOptions, error) {
	if c.NArg() > 1 {
		return historyOptions{}, usageError{"history takes at most one JOB.sh"}
	}
	o := historyOptions{Global: globalFlagsFrom(c), Script: c.Args().First(), Limit: c.Int("limit"), JSON: c.Bool("json"),
		User: currentUserName()}
	return o, nonNegative("--limit", o.Limit, "a number of jobs, 0 for all")
}

func runHistory(ctx context.Context, o historyOptions, w outWriters) error {
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	var key *advisor.ScriptKey
	var script *slurm.Script
	if o.Script != "" {
		if script, err = slurm.ReadScript(o.Script); err != nil {
			return err
		}
		k := advisor.KeyOf(o.Script, script, site, o.User)
		key = &k
	}
	hs, err := advisor.Histories(ctx, advisor.HistoriesRequest{UserDB: o.Global.DB, Site: site, AllJobs: key == nil}, readHistories(w.Err))
	if err != nil {
		return err
	}
	defer hs.Close()
	if hs.Warning != "" {
		fmt.Fprintf(w.Err, "migadvisor: %s\n", hs.Warning)
	}
	st, siteWide := hs.Own, hs.SiteWide
	recs, err := advisor.History(ctx, key, o.Limit, st, siteWide...)
	if err != nil {
		return err
	}
	jobs := make([]joblist.JobEntry, 0, len(recs))
	for i := range recs {
		jobs = append(jobs, joblist.EntryOf(&recs[i], site))
	}
	if len(jobs) == 0 {
		why := fmt.Sprintf("no jobs in %s yet: 'migadvisor collect' reads your jobs from Slurm accounting", history.Describe(st, siteWide))
		if key != nil {
			req := advisor.GatherRequest{Path: o.Script, Script: script, User: o.User}
			if why, err = whyNoRuns(ctx, site, req, st, siteWide); err != nil {
				return err
			}
		}
		return sayEmptyTo(w, o.JSON, why)
	}
	if o.JSON {
		return writeJSON(w.Out, jobs)
	}
	joblist.WriteTable(w.Out, jobs)
	return nil
}

// whyNoRuns says, in one line, why history has no jobs of the script at
// path: none of it or its earlier versions in the histories read, and what
// would give it some. Where its tracked jobs wait for collect, or jobs of
// its name are in the history linked to no script, recommend's notes say
// so (advisor.Gather words them); else the ways to runs: track for jobs
// plain sbatch submitted, a probe to measure it.
func whyNoRuns(ctx context.Context, site *catalog.Site, req advisor.GatherRequest, own *history.Store, siteWide []*history.Store) (string, error) {
	// Queue waits since now: none to read, only the notes are wanted.
	req.WaitsSince = time.Now()
	job, err := advisor.GatherFor(ctx, site, req, own, siteWide...)
	if err != nil {
		return "", err
	}
	path := req.Path
	word := slurm.ShellWord(path)
	what := fmt.Sprintf("if you submitted it with plain sbatch, 'migadvisor track %s JOBID...' links its jobs to it; "+
		"'migadvisor recommend --probe %s' measures it", word, word)
	if len(job.Notes) > 0 {
		what = strings.Join(job.Notes, "; ")
	}
	return fmt.Sprintf("no runs of %s, nor of its earlier versions, in %s: %s", path, history.Describe(own, siteWide), what), nil
}
