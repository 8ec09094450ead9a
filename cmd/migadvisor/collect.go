package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/internal/progress"
	"github.com/migadvisor/migadvisor/slurm"
)

func collectCommand() *cli.Command {
	return &cli.Command{
		Name:        "collect",
		Usage:       "import accounting (sacct) and job-output evidence into the history",
		Description: helpText("collect"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "sacct-file", Usage: "import a saved dump of 'sacct --parsable2' (- for stdin) instead of running sacct"},
			&cli.StringSliceFlag{Name: "outputs", Usage: "directory with job output files (repeatable)"},
			&cli.StringFlag{Name: "user", Usage: "collect these users' jobs (comma-separated)"},
			&cli.StringFlag{Name: "since", Usage: "collect jobs from this time: 2026-11-01, 2026-11-01T08:00, or 30m, 36h, 7d, 2w"},
			&cli.BoolFlag{Name: "all-users", Usage: "collect every user's jobs (root or a Slurm operator)"},
			&cli.BoolFlag{Name: "scripts", DefaultText: "on with --all-users",
				Usage: "link jobs that were not submitted through migadvisor to their scripts, from slurmdbd (sacct --batch-script)"},
			&cli.StringFlag{Name: "scripts-file", TakesFile: true,
				Usage: "link jobs to their scripts from a saved 'sacct --batch-script -j IDS' output instead of asking slurmdbd (with --sacct-file, away from Slurm)"},
			&cli.StringFlag{Name: "clusters", Usage: "on a multi-cluster site, ask sacct about these clusters (sacct -M)"},
			&cli.DurationFlag{Name: "overlap", Value: collect.DefaultOverlap,
				Usage: "start the next collect this long before this one started (clock skew, records slurmdbd gets late)"},
			&cli.DurationFlag{Name: "sacct-timeout", EnvVars: []string{"MIGADVISOR_SACCT_TIMEOUT"}, Value: slurm.DefaultSacctIdle,
				Usage: "stop sacct when it prints nothing for this long (slurmdbd not answering), and fail; 0: wait for ever"},
			&cli.BoolFlag{Name: "strict", Usage: "exit 1 if any record was skipped"},
			&cli.StringFlag{Name: "publish", EnvVars: []string{"MIGADVISOR_PUBLISH"}, Usage: "then publish the history's snapshot and advice index in this directory (see 'migadvisor publish')"},
			siteStoreFlag("send what the collect writes to the site history in MariaDB/MySQL that this option file reaches (by default, with --all-users, the site file's [history] site_store)"),
			clusterFlag(),
			slurmBinFlag(),
			jsonFlag(),
		},
		Action: bindAction(collectOptionsFrom, runCollect),
	}
}

// collectOptions are collect's flags: where accounting comes from (a dump,
// or sacct for a selection or for the tracked jobs) and what else is read.
type collectOptions struct {
	Global    globalFlags
	Slurm     slurmFlags
	Selection collect.Selection
	Outputs   []string // directories of job output files
	Overlap   time.Duration
	// SacctIdle is --sacct-timeout as the Slurm client takes it (negative:
	// none).
	SacctIdle time.Duration
	Strict    bool
	JSON      bool
	Publish   string // the directory to publish in after collecting; "": none
	// SiteStore is --site-store: the site store's option file, "off", or
	// "" for the site file's with --all-users.
	SiteStore string
	AllUsers  bool
}

// addsRuns: a collect of the user's own jobs adds runs to their history;
// a site-wide one (every user's, or published) has the published index.
func (o collectOptions) addsRuns() bool { return !o.AllUsers && o.Publish == "" }

func collectOptionsFrom(c *cli.Context) (collectOptions, error) {
	if c.NArg() > 0 {
		return collectOptions{}, usageError{"collect takes no arguments (did you mean --sacct-file " + c.Args().First() + "?)"}
	}
	since, err := parseSince(c.String("since"), time.Now())
	if err != nil {
		return collectOptions{}, err
	}
	var scripts *bool
	if c.IsSet("scripts") {
		v := c.Bool("scripts")
		scripts = &v
	}
	me := currentUserName()
	q := slurm.SacctQuery{Since: since, AllUsers: c.Bool("all-users"), Users: splitList(c.String("user")),
		Clusters: splitList(c.String("clusters"))}
	o := collectOptions{Global: globalFlagsFrom(c), Slurm: slurmFlagsFrom(c),
		Selection: collect.NewSelection(c.String("sacct-file"), q, scripts, me), Outputs: c.StringSlice("outputs"),
		Overlap: c.Duration("overlap"), Strict: c.Bool("strict"), JSON: c.Bool("json"), Publish: c.String("publish"),
		SiteStore: c.String("site-store"), AllUsers: c.Bool("all-users")}
	if f := c.String("scripts-file"); f != "" {
		if scripts != nil && !*scripts {
			return collectOptions{}, usageError{"--scripts-file links jobs to their scripts: it cannot go with --scripts=false"}
		}
		if f == "-" {
			return collectOptions{}, usageError{"--scripts-file - : standard input is for --sacct-file -; name the file of scripts"}
		}
		o.Selection.ScriptsFile = f
	}
	if o.Overlap < 0 {
		return collectOptions{}, usageError{fmt.Sprintf("--overlap is a duration ≥ 0, not %s", o.Overlap)}
	}
	switch o.SacctIdle = c.Duration("sacct-timeout"); {
	case o.SacctIdle < 0:
		return collectOptions{}, usageError{fmt.Sprintf("--sacct-timeout is a duration ≥ 0, not %s", o.SacctIdle)}
	case o.SacctIdle == 0:
		o.SacctIdle = -1 // for ever
	}
	return o, nil
}

func runCollect(ctx context.Context, o collectOptions, w outWriters) (err error) {
	ctx, stop := stoppable(ctx)
	defer stop()
	defer func() {
		if err != nil {
			err = interrupted(ctx, w.Err, err, "what this collect committed is kept, and the next collect goes on from there")
		}
	}()
	env := newEnv(o.Global, o.Slurm, w)
	where, err := env.where()
	if err != nil {
		return err
	}
	where.Slurm.SacctIdle = o.SacctIdle
	col, err := collect.Open(ctx, where)
	if err != nil {
		return err
	}
	defer col.Store.Close()
	done := showImportProgress(w.Err, col)
	res, err := collect.Session(ctx, col, collect.SessionOptions{
		Run: collect.RunOptions{Selection: o.Selection, Cluster: o.Slurm.Cluster, Outputs: o.Outputs, Overlap: o.Overlap, Stdin: os.Stdin,
			OnFallback: env.say,
			OnAccounted: func(r collect.Report) {
				done()
				if o.Selection.Dump != "" {
					r.Accounting.WriteSkipped(w.Err, r.Source)
				}
			}},
		SiteStore: o.SiteStore, SiteFileStore: col.Site.History.SiteStore, AllUsers: o.AllUsers,
		Publish: o.Publish, PushProgress: progress.Steps(w.Err, "sending to the site store")})
	done()
	if err != nil {
		// No summary follows: the records set aside are said here, the one
		// time they are known.
		saySetAside(col.Store, w.Err)
		return err
	}
	rep := collect.SummaryOf(res)
	if p := res.Published; p != nil && p.Warning != "" {
		env.say(p.Warning)
	}
	if o.JSON {
		if err := writeJSON(w.Out, rep); err != nil {
			return err
		}
	} else {
		rep.WriteText(w.Out)
	}
	return res.Accounting.Err(o.Strict)
}
