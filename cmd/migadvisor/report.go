//go:build !noreport

// The report command writes its docs page with the report package's
// plotting library; like docs, it is left out of the sbatch wrapper's
// binary.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/collect"
	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/advisor/index"
	"github.com/migadvisor/migadvisor/advisor/report"
	"github.com/migadvisor/migadvisor/advisor/savings"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
)

func reportCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:        "report",
		Usage:       "for admins: where the GPU SU go, and which users' scripts a smaller slice would do",
		Description: helpText("report"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "since", Value: "30d", Usage: "jobs that ended from this time: 2026-11-01, 2026-11-01T08:00, or 30m, 36h, 7d, 2w"},
			&cli.StringFlag{Name: "until", Usage: "jobs that ended before this time, as --since", DefaultText: "now"},
			&cli.StringFlag{Name: "month", Usage: "the jobs that ended in a calendar month instead: 2026-10, or last"},
			&cli.StringFlag{Name: "user", Usage: "one user's jobs only"},
			&cli.Float64Flag{Name: "min-su-saved", Usage: "list a user's script from this many SU saved", DefaultText: "the site file's min_su_saved, else 10"},
			&cli.IntFlag{Name: "min-runs", Usage: "runs a script needs before it is judged", DefaultText: "the site file's min_runs, else 2"},
			jsonFlag(),
			&cli.BoolFlag{Name: "csv", Usage: "print the listed scripts as CSV"},
			&cli.StringFlag{Name: "page", Usage: "write gpu-savings.md and gpu-savings.svg for the site's docs in this directory"},
			&cli.StringFlag{Name: "format", Value: report.FormatMD, Usage: "the page's format: md or mkdocs"},
			&cli.BoolFlag{Name: "notify", Usage: "tell each listed user through the site file's notify_command"},
			&cli.StringFlag{Name: "notify-dir", Usage: "write each user's notice as a file in this directory instead (implies --notify)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "with --notify: show the notices and where they would go; send nothing"},
			&cli.StringFlag{Name: "ledger", EnvVars: []string{"MIGADVISOR_NOTICE_LEDGER"}, DefaultText: "notices.json beside --db",
				Usage: "the file that remembers who was told of which script, and when"},
			siteStoreFlag("read the site history in MariaDB/MySQL that this option file reaches, not --db (by default the site file's [history] site_store)"),
		},
		Action: bindAction(reportOptionsFrom, runReport),
	})
}

type reportOptions struct {
	Global            globalFlags
	Period            history.Period
	User              string
	MinSUSaved        *float64
	MinRuns           *int
	JSON, CSV         bool
	Page, Format      string
	Notify, DryRun    bool
	NotifyDir, Ledger string
	SiteStore         string
	Now               time.Time
}

func reportOptionsFrom(c *cli.Context) (reportOptions, error) {
	o := reportOptions{Global: globalFlagsFrom(c), User: c.String("user"), JSON: c.Bool("json"), CSV: c.Bool("csv"),
		Page: c.String("page"), Format: c.String("format"), Notify: c.Bool("notify") || c.String("notify-dir") != "",
		DryRun: c.Bool("dry-run"), NotifyDir: c.String("notify-dir"), Ledger: c.String("ledger"), SiteStore: c.String("site-store"),
		Now: time.Now()}
	if c.NArg() > 0 {
		return o, usageError{"report takes no arguments: its flags select the jobs (--since, --until, --month, --user)"}
	}
	var err error
	if o.Period, err = reportPeriod(c, o.Now); err != nil {
		return o, err
	}
	if c.IsSet("min-su-saved") {
		v := c.Float64("min-su-saved")
		if v < 0 {
			return o, usageError{fmt.Sprintf("--min-su-saved %g: give 0 SU or more", v)}
		}
		o.MinSUSaved = &v
	}
	if c.IsSet("min-runs") {
		v := c.Int("min-runs")
		if v < 1 {
			return o, usageError{fmt.Sprintf("--min-runs %d: give 1 run or more", v)}
		}
		o.MinRuns = &v
	}
	if err := o.check(c); err != nil {
		return o, err
	}
	if o.Ledger == "" {
		o.Ledger = filepath.Join(filepath.Dir(o.Global.DB), "notices.json")
	}
	return o, nil
}

// reportPeriod reads --month, or --since and --until.
func reportPeriod(c *cli.Context, now time.Time) (history.Period, error) {
	if m := c.String("month"); m != "" {
		if c.IsSet("since") || c.IsSet("until") {
			return history.Period{}, usageError{"--month is the period: give it without --since and --until"}
		}
		return monthPeriod(m, now)
	}
	var p history.Period
	var err error
	if p.From, err = parseSince(c.String("since"), now); err != nil {
		return p, err
	}
	p.Before = now
	if u := c.String("until"); u != "" {
		if p.Before, err = parseSince(u, now); err != nil {
			return p, usageError{strings.Replace(err.Error(), "--since", "--until", 1)}
		}
		if !c.IsSet("since") { // the 30 days before --until, not before now
			p.From = p.Before.AddDate(0, 0, -30)
		}
	}
	if !p.From.IsZero() && !p.From.Before(p.Before) {
		return p, usageError{fmt.Sprintf("--since (%s) must be before --until (%s)", p.From.Format(time.DateTime), p.Before.Format(time.DateTime))}
	}
	return p, nil
}

// monthPeriod is a calendar month, local time: 2026-10, or "last" for the
// month before now's.
func monthPeriod(m string, now time.Time) (history.Period, error) {
	start, err := time.ParseInLocation("2006-01", m, time.Local)
	if m == "last" {
		start, err = time.Date(now.Year(), now.Month()-1, 1, 0, 0, 0, 0, time.Local), nil
	}
	if err != nil {
		return history.Period{}, usageError{fmt.Sprintf("--month %q: give a month (2026-10) or last", m)}
	}
	return history.Period{From: start, Before: start.AddDate(0, 1, 0)}, nil
}

// check refuses flags that would be ignored or that contradict each other.
func (o reportOptions) check(c *cli.Context) error {
	switch {
	case o.DryRun && !o.Notify:
		return usageError{"--dry-run shows the notices --notify would send: give --notify (or --notify-dir) with it"}
	case o.JSON && o.CSV:
		return usageError{"--json and --csv both print the report: give one"}
	case c.IsSet("format") && o.Page == "":
		return usageError{"--format is the --page's format: give --page DIR with it"}
	case o.Page != "" && !slices.Contains([]string{report.FormatMD, report.FormatMkDocs}, o.Format):
		return usageError{fmt.Sprintf("--format %q: the page is md or mkdocs", o.Format)}
	case o.Page != "" && o.User != "":
		return usageError{"--page writes the site's docs page, of every user's jobs: give it without --user"}
	}
	return nil
}

// reportJSON is report --json: the report, and what --notify did.
type reportJSON struct {
	*savings.Report
	History string                `json:"history"`
	Notify  *savings.NotifyResult `json:"notify,omitempty"`
	Page    []string              `json:"page_files,omitempty"`

	noticeFiles bool // the notices went to files, not a mail command
}

func runReport(ctx context.Context, o reportOptions, w outWriters) error {
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	th := savings.ThresholdsFor(site, o.MinSUSaved, o.MinRuns)
	var delivery savings.Delivery
	if o.Notify {
		if delivery, err = savings.NewDelivery(site, o.NotifyDir, o.DryRun, o.Now); err != nil {
			return err
		}
	}
	st, from, public, done, err := openReportHistory(ctx, o, site)
	if err != nil {
		return err
	}
	defer done()
	peers, err := index.PeersBeside(o.Global.DB, site)
	if err != nil {
		fmt.Fprintf(w.Err, "migadvisor: scripts measured on one profile are judged without other scripts' runtimes: %v\n", err)
	}
	rep, err := savings.Build(ctx, st, savings.Request{Site: site, Period: o.Period, User: o.User, Thresholds: th,
		Progress: showProgress(w.Err, "judging the scripts"), Peers: peers.Except})
	if err != nil {
		return err
	}
	out := reportJSON{Report: rep, History: from}
	if o.Page != "" {
		opt := report.PageOptions{Format: o.Format, Generator: "migadvisor " + version, Generated: o.Now, History: public}
		if out.Page, err = report.WriteSavings(o.Page, rep, site, opt); err != nil {
			return err
		}
	}
	if o.Notify {
		out.noticeFiles = delivery.Files
		res, err := savings.Notify(ctx, savings.NotifyRequest{Report: rep, Site: site, Ledger: o.Ledger, Sender: delivery.Sender,
			DryRun: o.DryRun, Now: o.Now, Unset: delivery.Unset})
		if err != nil {
			return err
		}
		out.Notify = &res
	}
	switch {
	case o.JSON:
		err = writeJSON(w.Out, out)
	case o.CSV:
		if err = rep.WriteCSV(w.Out); err == nil && out.Notify != nil {
			printNotices(w.Err, out.Notify, o.DryRun, out.noticeFiles) // stdout holds the CSV alone
		}
	default:
		printReport(w.Out, out, o.DryRun)
	}
	if err == nil && out.Notify != nil && out.Notify.Failed > 0 {
		return fmt.Errorf("%s could not be sent; the next report --notify tries again", textutil.Plural(out.Notify.Failed, "notice"))
	}
	return err
}

// openReportHistory opens what the report reads: the site store where
// there is one (copied into a history here), else --db, read-only. from
// names it for the admin; public for a page anyone may read (no store
// user or host).
func openReportHistory(ctx context.Context, o reportOptions, site *catalog.Site) (st *history.Store, from, public string, done func(), err error) {
	store, err := collect.OpenSiteStore(ctx, o.SiteStore, site.History.SiteStore, true)
	if err != nil {
		return nil, "", "", nil, err
	}
	if store != nil {
		defer store.Close()
		st, done, err := collect.CopyStore(ctx, store)
		if err != nil {
			return nil, "", "", nil, fmt.Errorf("read the site store %s: %w", store.Where(), err)
		}
		return st, "the site store " + store.Where(), "the site store", done, nil
	}
	if _, err := os.Stat(o.Global.DB); errors.Is(err, fs.ErrNotExist) {
		return nil, "", "", nil, noReportHistory(o.Global.DB, site)
	}
	if st, err = history.OpenWith(ctx, o.Global.DB, history.Options{ReadOnly: true}); err != nil {
		return nil, "", "", nil, err
	}
	return st, o.Global.DB, o.Global.DB, func() { st.Close() }, nil
}

// noReportHistory says where the site history is, when --db is not.
func noReportHistory(db string, site *catalog.Site) error {
	msg := fmt.Sprintf("no history at %s: report reads the site history that 'collect --all-users' fills; name it with --db or MIGADVISOR_DB", db)
	if site.History.SiteDB != "" {
		msg += fmt.Sprintf(" (the site's published one: --db %s)", site.History.SiteDB)
	}
	return errors.New(msg)
}

// printReport writes the report as text: the headline, the scripts, the
// totals per profile and user, the out-of-memory jobs, what was not
// judged, and what --notify and --page did.
func printReport(w io.Writer, out reportJSON, dryRun bool) {
	printJudged(w, out)
	if out.Notify != nil {
		printNotices(w, out.Notify, dryRun, out.noticeFiles)
	}
	for _, f := range out.Page {
		fmt.Fprintf(w, "wrote %s\n", f)
	}
}

func printJudged(w io.Writer, out reportJSON) {
	rep := out.Report
	whose := ""
	if rep.User != "" {
		whose = " of " + rep.User
	}
	fmt.Fprintf(w, "GPU jobs%s that ended %s, site %s, from %s: %s, %s SU\n", whose, rep.Period(), rep.Site, out.History,
		textutil.Plural(rep.Total.Jobs, "job"), advisor.FormatSU(rep.Total.SU))
	if rep.Total.Jobs == 0 {
		if rep.User != "" {
			fmt.Fprintf(w, "nothing to judge: no GPU job of %s ended in the period in this history\n", rep.User)
		} else {
			fmt.Fprintln(w, "nothing to judge: no GPU job ended in the period in this history (a site history is filled by 'collect --all-users')")
		}
		printUnjudged(w, rep)
		return
	}
	t := rep.Total
	if t.Smaller > 0 {
		fmt.Fprintf(w, "a smaller slice would have done %d of them: %s SU spent, about %s SU there; saves about %s SU (%s of what the GPU jobs spent)\n",
			t.Smaller, advisor.FormatSU(t.SmallerSU), advisor.FormatSU(t.SmallerSUThere), advisor.FormatSU(t.Saved), t.SavedShare())
	} else {
		fmt.Fprintln(w, "no job was judged to fit a smaller slice for less SU")
	}
	if t.OOM > 0 {
		fmt.Fprintf(w, "ran out of GPU memory: %s, %s SU\n", textutil.Plural(t.OOM, "job"), advisor.FormatSU(t.OOMSU))
	}
	printScripts(w, rep)
	printProfiles(w, rep)
	printUsers(w, rep)
	printOOMs(w, rep)
	printUnjudged(w, rep)
}

// printUsers lists the users a smaller slice or more memory concerns, most
// SU saved first.
func printUsers(w io.Writer, rep *savings.Report) {
	tw := newTable(w)
	shown := false
	for _, u := range rep.Users {
		if u.Smaller == 0 && u.OOM == 0 {
			continue
		}
		if !shown {
			fmt.Fprintln(w)
			fmt.Fprintln(tw, "USER\tJOBS\tSU\tSMALLER\tTHEIR SU\tSU THERE\tSAVED\tOOM\tSCRIPTS LISTED")
			shown = true
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\t%s\t%d\t%d\n", u.User, u.Jobs, advisor.FormatSU(u.SU), u.Smaller, advisor.FormatSU(u.SmallerSU),
			advisor.FormatSU(u.SmallerSUThere), advisor.FormatSU(u.Saved), u.OOM, u.Scripts)
	}
	tw.Flush()
}

func printScripts(w io.Writer, rep *savings.Report) {
	if len(rep.Scripts) > 0 {
		fmt.Fprintln(w)
		tw := newTable(w)
		fmt.Fprintln(tw, "USER\tSCRIPT\tJOBS\tRAN ON\tUSE\tSU SPENT\tSU THERE\tSAVED\tWHY")
		for _, s := range rep.Scripts {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", s.User, scriptLabel(s), s.Jobs, strings.Join(s.RanOn, ","), s.Recommended,
				advisor.FormatSU(s.SUSpent), advisor.FormatSU(s.SUThere), advisor.FormatSU(s.SUSaved), s.Why)
		}
		tw.Flush()
	}
	if rep.Below.Scripts > 0 {
		fmt.Fprintf(w, "not listed: %s saving under %s SU each (min_su_saved): %s, %s SU saved, counted in the totals\n",
			textutil.Plural(rep.Below.Scripts, "script"), advisor.FormatSU(rep.Thresholds.MinSUSaved), textutil.Plural(rep.Below.Jobs, "job"),
			advisor.FormatSU(rep.Below.Saved))
	}
}

// scriptLabel names a script for an admin: its file, else its job name,
// with the start of its fingerprint.
func scriptLabel(s savings.Script) string {
	name := s.Name
	if f := s.File(); f != "" {
		name = filepath.Base(f)
	}
	if fp := s.Fingerprint; len(fp) >= 8 {
		return name + " (" + fp[:8] + ")"
	}
	return name + " (by name)"
}

func printProfiles(w io.Writer, rep *savings.Report) {
	fmt.Fprintln(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "RAN ON\tJOBS\tSU\tSMALLER\tTHEIR SU\tSU THERE\tSAVED\tOOM")
	row := func(name string, t savings.Tally) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\t%s\t%d\n", name, t.Jobs, advisor.FormatSU(t.SU), t.Smaller, advisor.FormatSU(t.SmallerSU),
			advisor.FormatSU(t.SmallerSUThere), advisor.FormatSU(t.Saved), t.OOM)
	}
	for _, p := range rep.Profiles {
		row(p.Profile, p.Tally)
	}
	row("all", rep.Total)
	tw.Flush()
}

func printOOMs(w io.Writer, rep *savings.Report) {
	if len(rep.OOMs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nran out of GPU memory:")
	tw := newTable(w)
	fmt.Fprintln(tw, "USER\tJOB\tNAME\tPROFILE\tSU\tFITS ON")
	for _, o := range rep.OOMs {
		fits := o.Fits
		if fits == "" {
			fits = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", o.User, o.JobID, o.Name, o.Profile, advisor.FormatSU(o.SU), fits)
	}
	tw.Flush()
}

func printUnjudged(w io.Writer, rep *savings.Report) {
	if len(rep.Unjudged) == 0 {
		return
	}
	fmt.Fprintln(w, "\nnot judged:")
	for _, u := range rep.Unjudged {
		fmt.Fprintf(w, "  %s (%s SU): %s\n", textutil.Plural(u.Jobs, "job"), advisor.FormatSU(u.SU), u.Reason)
		for _, e := range u.Examples {
			fmt.Fprintf(w, "    %s\n", e)
		}
	}
}

// printNotices says what --notify did, or with --dry-run would do, user by
// user.
func printNotices(w io.Writer, res *savings.NotifyResult, dryRun, files bool) {
	fmt.Fprintln(w)
	defer func() {
		for _, u := range res.Unset {
			fmt.Fprintf(w, "not configured yet: %s\n", u)
		}
	}()
	if len(res.Notices) == 0 && res.Told == 0 {
		fmt.Fprintln(w, "no notice to send: no script is listed")
		return
	}
	for _, n := range res.Notices {
		switch {
		case n.Err != "" && dryRun:
			fmt.Fprintf(w, "would not send to %s: %s\n", n.User, n.Err)
		case dryRun:
			fmt.Fprintf(w, "would send to %s: %s\n--- Subject: %s\n%s---\n", n.User, n.To, n.Subject, n.Body)
		case n.Err != "":
			fmt.Fprintf(w, "not sent to %s: %s\n", n.User, n.Err)
		case files:
			fmt.Fprintf(w, "wrote the notice for %s: %s\n", n.User, n.To)
		default:
			fmt.Fprintf(w, "sent to %s: %s\n", n.User, n.To)
		}
	}
	switch {
	case res.Told == 1:
		fmt.Fprintln(w, "1 script left out: its user was told of it within notify_every_days")
	case res.Told > 1:
		fmt.Fprintf(w, "%d scripts left out: their users were told of them within notify_every_days\n", res.Told)
	}
}
