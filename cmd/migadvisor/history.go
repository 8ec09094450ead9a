package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/app/joblist"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/session"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

func historyCommand() *cli.Command {
	return &cli.Command{
		Name:        "history",
		Usage:       "show the evidence per job: state, time, memory, OOMs, work, SU",
		ArgsUsage:   "[JOB.sh] | --scripts | --sessions",
		Description: helpText("history"),
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "limit", Value: 100, Usage: "show at most this many jobs (with --scripts, scripts; with --sessions, names; 0: all)"},
			&cli.BoolFlag{Name: "scripts", Usage: "list the scripts the histories link your jobs to (what recommend JOB.sh finds runs of), not jobs"},
			&cli.BoolFlag{Name: "sessions", Usage: "list the names your ended interactive sessions took (what recommend --session NAME reads), not jobs"},
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
	// List is what to list instead of jobs: "scripts", "sessions"; "": jobs.
	List string
}

func historyOptionsFrom(c *cli.Context) (historyOptions, error) {
	if c.NArg() > 1 {
		return historyOptions{}, usageError{"history takes at most one JOB.sh"}
	}
	o := historyOptions{Global: globalFlagsFrom(c), Script: c.Args().First(), Limit: c.Int("limit"), JSON: c.Bool("json"),
		User: currentUserName()}
	for _, list := range []string{"scripts", "sessions"} {
		switch {
		case !c.Bool(list):
		case o.List != "":
			return o, usageError{"--scripts and --sessions are two lists: ask for one"}
		case o.Script != "":
			return o, usageError{fmt.Sprintf("--%s lists every one of yours: it takes no JOB.sh", list)}
		default:
			o.List = list
		}
	}
	return o, nonNegative("--limit", o.Limit, "a number of jobs, 0 for all")
}

func runHistory(ctx context.Context, o historyOptions, w outWriters) error {
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	if o.List != "" {
		return runHistoryList(ctx, o, site, w)
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
		if st != nil && st.Absent() && len(siteWide) == 0 {
			// A mistyped --db reads as empty: say there is no such file.
			why = fmt.Sprintf("no history at %s yet (no such file): 'migadvisor collect' makes it, reading your jobs from Slurm accounting; "+
				"check the path if you meant an existing one", st.Path())
		}
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
	req.NoWaits = true // only the notes are wanted
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

// runHistoryList lists the user's scripts or session names that their
// history and the site's know.
func runHistoryList(ctx context.Context, o historyOptions, site *catalog.Site, w outWriters) error {
	hs, err := advisor.Histories(ctx, advisor.HistoriesRequest{UserDB: o.Global.DB, Site: site}, readHistories(w.Err))
	if err != nil {
		return err
	}
	defer hs.Close()
	if hs.Warning != "" {
		fmt.Fprintf(w.Err, "migadvisor: %s\n", hs.Warning)
	}
	read := "no history (there is none yet)"
	if hs.Own != nil || len(hs.SiteWide) > 0 {
		read = history.Describe(hs.Own, hs.SiteWide)
	}
	if o.List == "sessions" {
		names, err := session.Names(ctx, o.User, hs.Own, hs.SiteWide...)
		if err != nil {
			return err
		}
		if len(names) == 0 {
			return sayEmptyTo(w, o.JSON, fmt.Sprintf("no ended session of %s in %s: 'migadvisor collect --since 30d' reads your jobs, "+
				"sessions too, from Slurm accounting", o.User, read))
		}
		names = names[:limited(len(names), o.Limit)]
		if o.JSON {
			return writeJSON(w.Out, names)
		}
		session.WriteNames(w.Out, names)
		return nil
	}
	scripts, err := joblist.Scripts(ctx, o.User, hs.Own, hs.SiteWide...)
	if err != nil {
		return err
	}
	if len(scripts) == 0 {
		return sayEmptyTo(w, o.JSON, fmt.Sprintf("no script of %s has jobs in %s: the sbatch wrapper, 'migadvisor track JOB.sh JOBID...' "+
			"and 'migadvisor recommend --probe JOB.sh' link jobs to their script", o.User, read))
	}
	scripts = scripts[:limited(len(scripts), o.Limit)]
	if o.JSON {
		return writeJSON(w.Out, scripts)
	}
	joblist.WriteScripts(w.Out, scripts)
	return nil
}

// limited is how many of n to show under --limit (0: all).
func limited(n, limit int) int {
	if limit > 0 {
		return min(n, limit)
	}
	return n
}
