//go:build !noreport

// The report command writes its docs page with the report package's
// plotting library; like docs, it is left out of the sbatch wrapper's
// binary.

package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/app/report"
	"github.com/migadvisor/migadvisor/advisor/app/savings"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/internal/progress"
	"github.com/migadvisor/migadvisor/internal/textutil"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:        "report",
		Usage:       "for admins: where the GPU SU go, and which users' scripts a smaller slice would do",
		Description: helpText("report"),
		Flags: append(periodFlags(),
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
		),
		Action: bindAction(reportOptionsFrom, runReport),
	}
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

// periodFlags are --since, --until and --month, the period of the jobs
// report and plan read (reportPeriod).
func periodFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "since", Value: "30d", Usage: "jobs that ended from this time: 2026-11-01, 2026-11-01T08:00, or 30m, 36h, 7d, 2w"},
		&cli.StringFlag{Name: "until", Usage: "jobs that ended before this time, as --since", DefaultText: "now"},
		&cli.StringFlag{Name: "month", Usage: "the jobs that ended in a calendar month instead: 2026-10, or last"},
	}
}

// reportPeriod reads --month, or --since and --until.
func reportPeriod(c *cli.Context, now time.Time) (history.Period, error) {
	if m := c.String("month"); m != "" {
		if c.IsSet("since") || c.IsSet("until") {
			return history.Period{}, usageError{"--month is the period: give it without --since and --until"}
		}
		p, err := history.MonthPeriod(m, now)
		if err != nil {
			return p, usageError{fmt.Sprintf("--month %q: give a month (2026-10) or last", m)}
		}
		return p, nil
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
	h, err := collect.OpenSiteHistory(ctx, o.SiteStore, site, o.Global.DB)
	if err != nil {
		return err
	}
	defer h.Close()
	peers, err := index.PeersBeside(o.Global.DB, site)
	if err != nil {
		fmt.Fprintf(w.Err, "migadvisor: scripts measured on one profile are judged without other scripts' runtimes: %v\n", err)
	}
	rep, err := savings.Build(ctx, h.Store, savings.Request{Site: site, Period: o.Period, User: o.User, Thresholds: th,
		Progress: progress.Steps(w.Err, "judging the scripts"), Peers: peers.Except})
	if err != nil {
		return err
	}
	switch {
	case history.IsSnapshot(h.From):
		rep.Snapshot = true // an empty report's collect is the live history's
	case h.From == o.Global.DB && o.Global.DB != defaultDBPath():
		rep.DB = o.Global.DB // an empty report's collect names it
	}
	out := reportJSON{Report: rep, History: h.From}
	if o.Page != "" {
		opt := report.PageOptions{Format: o.Format, Generator: "migadvisor " + version, Generated: o.Now, History: h.Public}
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
			out.Notify.WriteText(w.Err, o.DryRun, out.noticeFiles) // stdout holds the CSV alone
		}
	default:
		out.writeText(w.Out, o.DryRun)
	}
	if err == nil && out.Notify != nil && out.Notify.Failed > 0 {
		return fmt.Errorf("%s could not be sent; the next report --notify tries again", textutil.Plural(out.Notify.Failed, "notice"))
	}
	return err
}

// writeText writes the report as text, then what --notify and --page did.
func (out reportJSON) writeText(w io.Writer, dryRun bool) {
	out.Report.WriteText(w, out.History)
	if out.Notify != nil {
		out.Notify.WriteText(w, dryRun, out.noticeFiles)
	}
	for _, f := range out.Page {
		fmt.Fprintf(w, "wrote %s\n", f)
	}
}
