//go:build !noreport

// The docs command links the report package and its plotting library, whose
// start-up (font tables, 2 ms) every command pays; the sbatch wrapper's own
// binary (migadvisor-sbatch, built with -tags noreport) leaves them out.

package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/app/report"
	"github.com/migadvisor/migadvisor/bench/workloads"
)

func docsCommand() *cli.Command {
	return &cli.Command{
		Name:        "docs",
		Usage:       "write the site's benchmark tables and pages from the history",
		Description: helpText("docs"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "directory for the files (required)"},
			&cli.StringFlag{Name: "workloads", Usage: "comma-separated workload tags (default: every workload in the history)"},
			&cli.StringFlag{Name: "format", Value: report.FormatMkDocs, Usage: "csv, md or mkdocs"},
			&cli.StringFlag{Name: "csv-dir", DefaultText: "the --out directory", Usage: "directory for the CSVs, as the pages read them (relative to where mkdocs runs)"},
			jsonFlag(),
		},
		Action: bindAction(docsOptionsFrom, runDocs),
	}
}

// docsOptions are docs' flags.
type docsOptions struct {
	Global    globalFlags
	Out       string
	CSVDir    string // where the CSVs go; the --out directory unless given
	Format    string
	Workloads []string // none: every workload in the history
	JSON      bool
}

func docsOptionsFrom(c *cli.Context) (docsOptions, error) {
	o := docsOptions{Global: globalFlagsFrom(c), Out: c.String("out"), CSVDir: c.String("csv-dir"), Format: c.String("format"),
		Workloads: splitList(c.String("workloads")), JSON: c.Bool("json")}
	if c.NArg() > 0 {
		return o, usageError{fmt.Sprintf("docs takes no arguments (did you mean --out %s?)", c.Args().First())}
	}
	if o.Out == "" {
		return o, usageError{"docs needs --out DIR"}
	}
	if !slices.Contains(report.Formats, o.Format) {
		return o, usageError{fmt.Sprintf("--format: %q is not one of %s", o.Format, strings.Join(report.Formats, ", "))}
	}
	if o.CSVDir == "" {
		o.CSVDir = o.Out
	}
	return o, nil
}

func runDocs(ctx context.Context, o docsOptions, w outWriters) error {
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	pub, err := report.PublishHistory(ctx, o.Global.DB, report.PublishOptions{Site: site, Want: o.Workloads, Dir: o.Out,
		Describe: describeWorkload, Page: report.PageOptions{Format: o.Format, CSVDir: o.CSVDir, Generator: "migadvisor " + version,
			Generated: time.Now(), History: o.Global.DB}})
	for _, tag := range pub.Skipped {
		fmt.Fprintf(w.Err, "migadvisor: %s has no ended single-GPU runs yet; skipped (run 'migadvisor collect'?)\n", tag)
	}
	var unknown *report.UnknownWorkloadError
	switch {
	case errors.Is(err, report.ErrNoHistory):
		return fmt.Errorf("no history at %s: 'migadvisor benchmark run', or 'collect' after your own runs, fills it", o.Global.DB)
	case errors.As(err, &unknown):
		return usageError{"--workloads: " + err.Error()}
	case errors.Is(err, report.ErrNoWorkloads):
		return fmt.Errorf("%w; 'migadvisor benchmark run' or 'track --workload' tags them", err)
	case err != nil:
		return err
	case len(pub.Written) == 0:
		return fmt.Errorf("no workload in %s has runs to report", o.Global.DB)
	}
	if o.JSON {
		return writeJSON(w.Out, pub.Summaries())
	}
	return pub.WriteText(w.Out)
}

// describeWorkload gives a workload of a built-in suite its title (its
// variant's: "(synthetic)"), description and published table layout.
func describeWorkload(tag string) report.Workload {
	w := report.Workload{Tag: tag}
	if known, ok := workloads.Find(tag); ok {
		w.Title, w.Description, w.Table = known.TitleFor(tag), known.DescriptionFor(tag), known.Table
	}
	return w
}
