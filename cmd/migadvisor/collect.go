package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/collect"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

func collectCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
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
			&cli.StringFlag{Name: "clusters", Usage: "on a multi-cluster site, ask sacct about these clusters (sacct -M)"},
			&cli.DurationFlag{Name: "overlap", Value: collect.DefaultOverlap,
				Usage: "start the next collect this long before this one started (clock skew, records slurmdbd gets late)"},
			&cli.BoolFlag{Name: "strict", Usage: "exit 1 if any record was skipped"},
			&cli.StringFlag{Name: "publish", EnvVars: []string{"MIGADVISOR_PUBLISH"}, Usage: "then publish the history's snapshot and advice index in this directory (see 'migadvisor publish')"},
			siteStoreFlag("send what the collect writes to the site history in MariaDB/MySQL that this option file reaches (by default, with --all-users, the site file's [history] site_store)"),
			clusterFlag(),
			slurmBinFlag(),
			jsonFlag(),
		},
		Action: bindAction(collectOptionsFrom, runCollect),
	})
}

// collectOptions are collect's flags: where accounting comes from (a dump,
// or sacct for a selection or for the tracked jobs) and what else is read.
type collectOptions struct {
	Global    globalFlags
	Slurm     slurmFlags
	Selection collect.Selection
	Outputs   []string // directories of job output files
	Overlap   time.Duration
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
	if o.Overlap < 0 {
		return collectOptions{}, usageError{fmt.Sprintf("--overlap is a duration ≥ 0, not %s", o.Overlap)}
	}
	return o, nil
}

func runCollect(ctx context.Context, o collectOptions, w outWriters) error {
	col, err := openCollectorFor(ctx, o.Global, o.Slurm)
	if err != nil {
		return err
	}
	defer col.Store.Close()
	done := showImportProgress(w.Err, col)
	res, err := collect.Session(ctx, col, collect.SessionOptions{
		Run: collect.RunOptions{Selection: o.Selection, Cluster: o.Slurm.Cluster, Outputs: o.Outputs, Overlap: o.Overlap, Stdin: os.Stdin,
			OnFallback: func(sentence string) { fmt.Fprintf(w.Err, "migadvisor: %s\n", sentence) },
			OnAccounted: func(r collect.Report) {
				done()
				if o.Selection.Dump != "" {
					warnSkipped(w.Err, r.Source, r.Accounting)
				}
			}},
		SiteStore: o.SiteStore, SiteFileStore: col.Site.History.SiteStore, AllUsers: o.AllUsers,
		Publish: o.Publish, PushProgress: showPushProgress(w.Err)})
	done()
	if err != nil {
		return err
	}
	rep := collect.SummaryOf(res)
	if p := res.Published; p != nil {
		sayPublished(w.Err, *p)
	}
	if o.JSON {
		if err := writeJSON(w.Out, rep); err != nil {
			return err
		}
	} else {
		printCollect(w.Out, rep)
	}
	return res.Accounting.Err(o.Strict)
}

// skippedShown bounds the skipped records collect names on stderr.
const skippedShown = 20

// warnSkipped names on stderr the records of the dump file that were skipped.
func warnSkipped(stderr io.Writer, file string, res collect.ImportResult) {
	for i, s := range res.Skipped {
		if i == skippedShown {
			fmt.Fprintf(stderr, "%s: %d more records skipped (--json lists the first %d)\n", file, res.SkippedTotal-i, slurm.MaxSkippedKept)
			break
		}
		fmt.Fprintf(stderr, "%s:%d: skipped: %v\n", file, s.Line, s.Err)
	}
}

func printCollect(w io.Writer, rep collect.Summary) {
	if rep.Source == collect.SourceNone {
		fmt.Fprintln(w, "accounting: no tracked job is waiting for its record")
	} else {
		fmt.Fprintf(w, "accounting (%s): %s: %d new, %d updated, %d unchanged", rep.Source, textutil.Plural(rep.Read, "job"), rep.New, rep.Updated, rep.Unchanged)
		if rep.Stubs > 0 {
			fmt.Fprintf(w, ", %d still a placeholder record (run collect again in a few seconds)", rep.Stubs)
		}
		if n := rep.SkippedTotal; n > 0 {
			fmt.Fprintf(w, "; %d records skipped", n)
		}
		fmt.Fprintln(w)
	}
	printUnplaced(w, rep)
	if rep.Jobstats > 0 || rep.BadJobstats > 0 {
		fmt.Fprintf(w, "jobstats: GPU figures of %s read from AdminComment", textutil.Plural(rep.JobstatsGPU, "job"))
		switch others := rep.Jobstats - rep.JobstatsGPU; {
		case others == 1:
			fmt.Fprint(w, "; 1 other summary held none")
		case others > 1:
			fmt.Fprintf(w, "; %d other summaries held none", others)
		}
		if rep.BadJobstats > 0 {
			b := rep.BadJobstatsJobs[0]
			fmt.Fprintf(w, "; %d summaries could not be read, imported without them (job %s: %s)", rep.BadJobstats, b.JobID, b.Reason)
		}
		fmt.Fprintln(w)
	}
	if rep.Window != nil {
		printWindow(w, *rep.Window)
	}
	if len(rep.UnknownToSlurm) > 0 {
		fmt.Fprintln(w, bench.NoSuchJob(rep.UnknownToSlurm))
	}
	if rep.Unlinked > 0 {
		fmt.Fprintf(w, "%s through the sbatch wrapper found no job in accounting a day later (refused by sbatch? another user, name or directory?): dropped\n",
			textutil.Plural(rep.Unlinked, "submission"))
	}
	if rep.Ambiguous > 0 {
		fmt.Fprintf(w, "%s through the sbatch wrapper left unlinked as ambiguous (scripts of one job name submitted from one directory at once, and slurmdbd has not stored their jobs' scripts yet): the next collect tries again\n",
			textutil.Plural(rep.Ambiguous, "submission"))
	}
	if rep.Linked > 0 {
		fmt.Fprintf(w, "%s through the sbatch wrapper linked to %s\n", textutil.Plural(rep.Linked, "submission"),
			map[bool]string{true: "its job", false: "their jobs"}[rep.Linked == 1])
	}
	for _, m := range rep.Refiled {
		if m.Jobs == 1 {
			fmt.Fprintf(w, "1 job filed under cluster %q is the same as %s's: it is one record now, under %s\n", m.From, m.To, m.To)
		} else {
			fmt.Fprintf(w, "%d jobs filed under cluster %q are the same as %s's: each is one record now, under %s\n", m.Jobs, m.From, m.To, m.To)
		}
	}
	if s := rep.Scripts; s != nil {
		fmt.Fprintf(w, "scripts: %s linked from slurmdbd", textutil.Plural(s.Linked, "job"))
		if s.Missing > 0 {
			fmt.Fprintf(w, ", %d without a stored script (AccountingStoreFlags=job_script?)", s.Missing)
		}
		fmt.Fprintln(w)
	}
	o := rep.Outputs
	fmt.Fprintf(w, "job output: %d files read, %d unchanged", o.Scanned, o.Unchanged)
	var found []string
	if o.GPUOOMs > 0 {
		found = append(found, textutil.Plural(o.GPUOOMs, "GPU OOM"))
	}
	if o.HostOOMs > 0 {
		found = append(found, textutil.Plural(o.HostOOMs, "host OOM"))
	}
	if o.Work > 0 {
		found = append(found, fmt.Sprintf("work reported by %s", textutil.Plural(o.Work, "job")))
	}
	if o.GPUMemory > 0 {
		found = append(found, fmt.Sprintf("GPU memory measured in %s", textutil.Plural(o.GPUMemory, "job")))
	}
	if o.Emulated > 0 {
		found = append(found, textutil.Plural(o.Emulated, "emulated run"))
	}
	if len(found) > 0 {
		fmt.Fprintf(w, "; %s", strings.Join(found, ", "))
	}
	fmt.Fprintln(w)
	for _, u := range o.Unread {
		fmt.Fprintf(w, "skipped: %s\n", u)
	}
	for _, p := range o.Capped {
		fmt.Fprintf(w, "%s is over 64 MiB: read its first and last 32 MiB only\n", p)
	}
	if len(o.Missing) > 0 {
		// A site-wide collect can miss thousands (other users' files it cannot
		// see): name a few, count the rest; --json lists them all.
		fmt.Fprintf(w, "no output file found for %s (point --outputs at their directory)\n", textutil.JobsNamed(o.Missing, 10))
	}
	switch {
	case rep.Store != nil && rep.Store.Changes == 0:
		fmt.Fprintf(w, "site store: %s already had everything\n", rep.Store.Store)
	case rep.Store != nil:
		fmt.Fprintf(w, "site store: %s written or deleted in %s\n", textutil.Plural(rep.Store.Changes, "row"), rep.Store.Store)
	}
	if rep.Published != nil {
		printPublished(w, *rep.Published)
	}
}

// unplacedShown bounds the GPU types collect names in its summary; --json
// lists them all.
const unplacedShown = 10

// printUnplaced names the GPU types accounting gave that the site has no
// profile for, with their jobs, and what to add to the site file: those
// jobs have no profile and no SU until it names them.
func printUnplaced(w io.Writer, rep collect.Summary) {
	var named []string
	jobs, untyped := rep.UnplacedOtherJobs, 0
	for _, u := range rep.UnplacedGPUTypes {
		if u.Type == "" {
			untyped = u.Jobs
			continue
		}
		jobs += u.Jobs
		if len(named) < unplacedShown {
			named = append(named, fmt.Sprintf("%s (%d)", u.Type, u.Jobs))
		}
	}
	if types := len(rep.UnplacedGPUTypes) - min(untyped, 1); types > len(named) || rep.UnplacedOtherJobs > 0 {
		named = append(named, "others")
	}
	switch {
	case jobs == 1:
		fmt.Fprintf(w, "1 job on a GPU type this site file does not name: %s; add it as gres_types in the site file\n", named[0])
	case jobs > 1:
		fmt.Fprintf(w, "%d jobs on GPU types this site file does not name: %s; add them as gres_types in the site file\n", jobs, strings.Join(named, ", "))
	}
	switch {
	case untyped == 1:
		fmt.Fprintln(w, "1 job on a GPU of no type, which this site file gives no profile: set untyped_gpu in the site file")
	case untyped > 1:
		fmt.Fprintf(w, "%d jobs on GPUs of no type, which this site file gives no profile: set untyped_gpu in the site file\n", untyped)
	}
}

// printWindow says which stretch of accounting was read and where the next
// collect starts.
func printWindow(w io.Writer, win collect.Window) {
	const layout = "2006-01-02 15:04:05"
	from := "since " + win.Since.Format(layout)
	if win.FromWatermark {
		from += " (where the last collect left off)"
	}
	if win.Rechecked > 0 {
		from += fmt.Sprintf(", and %s still running or pending asked about by id", textutil.Plural(win.Rechecked, "job"))
	}
	fmt.Fprintf(w, "window: %s\n", from)
	switch {
	case !win.Gap.IsZero():
		fmt.Fprintf(w, "the next collect still starts at %s: --since is later, and moving it would skip what lies between\n", win.Gap.Format(layout))
	case !win.Watermark.IsZero():
		fmt.Fprintf(w, "the next collect starts at %s\n", win.Watermark.Format(layout))
	}
}
