//go:build !noreport

// The docs command links the report package and its plotting library, whose
// start-up (font tables, 2 ms) every command pays; the sbatch wrapper's own
// binary (migadvisor-sbatch, built with -tags noreport) leaves them out.

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

	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/advisor/report"
	"github.com/migadvisor/migadvisor/bench/workloads"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/atomicfile"
)

func docsCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:  "docs",
		Usage: "write the site's benchmark tables and pages from the history",
		Description: `For each workload in the history (the tag 'bench run', 'track --workload' or
'sweep --workload' gave its jobs), writes into DIR:
  <workload>.csv  the runs by profile; for the Wulver suite's workloads in the
                  published table's own columns, else a generic table. An empty
                  cell is a figure no run gave; OOM marks a profile that ran out
                  of GPU memory. Figures are medians of the completed runs.
  <workload>.svg  (md, mkdocs) runtime and SU of a run per profile
  <workload>.md   (md) the table, the chart, key takeaways and provenance
                  (mkdocs) the same, with a markdown-exec block that reads the
                  CSV where docs wrote it, as the Wulver docs do
  index.md        (md, mkdocs) the workloads, each with its first takeaway
With --csv-dir the CSVs go there instead of DIR (a docs project that keeps
its tables apart from its pages), and the pages read them there: give it
relative to the directory mkdocs runs in. Files of those names are replaced;
nothing else is touched.

Examples:
   migadvisor docs --out docs/
   migadvisor docs --out docs/assets/tables/MIG --format csv --workloads llm-finetuning
   migadvisor docs --out docs/MIG --csv-dir docs/assets/tables/MIG   # from the mkdocs project's root
   migadvisor docs --out site/ --format md
   migadvisor --db /shared/migadvisor/site.db docs --out mkdocs/docs/MIG --json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "directory for the files (required)"},
			&cli.StringFlag{Name: "workloads", Usage: "comma-separated workload tags (default: every workload in the history)"},
			&cli.StringFlag{Name: "format", Value: report.FormatMkDocs, Usage: "csv, md or mkdocs"},
			&cli.StringFlag{Name: "csv-dir", DefaultText: "the --out directory", Usage: "directory for the CSVs, as the pages read them (relative to where mkdocs runs)"},
			jsonFlag(),
		},
		Action: bindAction(docsOptionsFrom, runDocs),
	})
}

// docsWorkload is what docs wrote for one workload.
type docsWorkload struct {
	Workload string   `json:"workload"`
	Title    string   `json:"title"`
	Table    string   `json:"table"`
	Profiles []string `json:"profiles"`
	Runs     int      `json:"runs"`
	Files    []string `json:"files"`
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
	st, err := history.OpenWith(ctx, o.Global.DB, history.Options{ReadOnly: true})
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no history at %s: 'migadvisor benchmark run', or 'collect' after your own runs, fills it", o.Global.DB)
	}
	if err != nil {
		return err
	}
	defer st.Close()
	tags, err := docsTags(ctx, st, o.Workloads)
	if err != nil {
		return err
	}
	opt := report.PageOptions{Format: o.Format, CSVDir: o.CSVDir, Generator: "migadvisor " + version,
		Generated: time.Now(), History: o.Global.DB}
	for _, dir := range []string{o.Out, o.CSVDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	var done []docsWorkload
	var reps []*report.Report
	for _, tag := range tags {
		rep, err := buildReport(ctx, st, site, tag)
		if err != nil {
			return err
		}
		if len(rep.Profiles) == 0 {
			fmt.Fprintf(w.Err, "migadvisor: %s has no ended single-GPU runs yet; skipped (run 'migadvisor collect'?)\n", tag)
			continue
		}
		files, err := writeReport(rep, o.Out, opt)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
		done = append(done, summariseReport(rep, files))
	}
	if len(reps) > 0 && o.Format != report.FormatCSV {
		index := filepath.Join(o.Out, "index.md")
		if err := atomicfile.Write(index, []byte(indexPage(reps, site, opt)), 0o644); err != nil {
			return err
		}
	}
	if len(done) == 0 {
		return fmt.Errorf("no workload in %s has runs to report", o.Global.DB)
	}
	return printDocs(w.Out, o.JSON, done)
}

// docsTags are the workloads asked for, else every workload the history has.
func docsTags(ctx context.Context, st *history.Store, want []string) ([]string, error) {
	known, err := st.Workloads(ctx)
	if err != nil {
		return nil, err
	}
	var have []string
	for _, w := range known {
		have = append(have, w.Workload)
	}
	if len(want) == 0 {
		if len(have) == 0 {
			return nil, fmt.Errorf("%s has no jobs tagged with a workload; 'migadvisor benchmark run' or 'track --workload' tags them", st.Path())
		}
		return have, nil
	}
	for _, w := range want {
		if !slices.Contains(have, w) {
			return nil, usageError{fmt.Sprintf("--workloads: %s has no jobs tagged %q (it has: %s)", st.Path(), w, orDash(strings.Join(have, ", ")))}
		}
	}
	return want, nil
}

// buildReport reads a workload's runs; a workload of a built-in suite gets
// its title, description and published table layout.
func buildReport(ctx context.Context, st *history.Store, site *catalog.Site, tag string) (*report.Report, error) {
	recs, err := st.History(ctx, history.HistoryFilter{Workload: tag})
	if err != nil {
		return nil, err
	}
	w := report.Workload{Tag: tag}
	if known, ok := workloads.Find(tag); ok {
		w.Title, w.Description, w.Table = known.Title, known.Description, known.Table
		if variant := strings.TrimPrefix(tag, known.Name); variant != "" {
			w.Title += " (" + strings.ReplaceAll(strings.TrimPrefix(variant, "@"), "@", ", ") + ")"
		}
	}
	return report.Build(site, w, recs)
}

// writeReport writes a workload's files in the format and returns their paths.
// The CSV goes to opt.CSVDir, where the page reads it.
func writeReport(rep *report.Report, dir string, opt report.PageOptions) ([]string, error) {
	base := filepath.Join(dir, rep.FileName())
	csv, err := rep.CSV()
	if err != nil {
		return nil, err
	}
	csvPath := filepath.Join(opt.CSVDir, rep.FileName()+".csv")
	files := map[string][]byte{csvPath: csv}
	if opt.Format != report.FormatCSV {
		svg, err := rep.Chart()
		if err != nil {
			return nil, err
		}
		page, err := rep.Page(opt)
		if err != nil {
			return nil, err
		}
		files[base+".svg"], files[base+".md"] = svg, []byte(page)
	}
	var paths []string
	for _, path := range []string{csvPath, base + ".svg", base + ".md"} {
		if b, ok := files[path]; ok {
			if err := atomicfile.Write(path, b, 0o644); err != nil {
				return nil, err
			}
			paths = append(paths, path)
		}
	}
	return paths, nil
}

func summariseReport(rep *report.Report, files []string) docsWorkload {
	d := docsWorkload{Workload: rep.Workload.Tag, Title: rep.Workload.Title, Table: rep.Workload.Table, Files: files}
	if d.Table == "" {
		d.Table = "generic"
	}
	for _, pr := range rep.Profiles {
		d.Profiles = append(d.Profiles, pr.Profile.Name)
		d.Runs += pr.Runs
	}
	return d
}

// indexPage lists the workloads with their first takeaway.
func indexPage(reps []*report.Report, site *catalog.Site, opt report.PageOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# GPU profile benchmarks at %s\n\n", site.Title)
	fmt.Fprintf(&b, "Each workload below was run on %s's GPU profiles (%s) and measured: runtime, "+
		"GPU memory, service units (SU), and the work done.\n\n", site.Title, strings.Join(site.ProfileNames(), ", "))
	for _, rep := range reps {
		fmt.Fprintf(&b, "## [%s](%s.md)\n\n", rep.Workload.Title, rep.FileName())
		if t, err := rep.Takeaways(); err == nil && len(t) > 0 {
			fmt.Fprintf(&b, "%s\n\n", t[0])
		}
	}
	fmt.Fprintf(&b, "Generated by %s on %s.\n", opt.Generator, opt.Generated.UTC().Format("2006-01-02"))
	return b.String()
}

func printDocs(out io.Writer, asJSON bool, done []docsWorkload) error {
	if asJSON {
		return writeJSON(out, done)
	}
	t := newTable(out)
	fmt.Fprintln(t, "WORKLOAD\tTABLE\tRUNS\tPROFILES\tFILES")
	for _, d := range done {
		fmt.Fprintf(t, "%s\t%s\t%d\t%s\t%s\n", d.Workload, d.Table, d.Runs, strings.Join(d.Profiles, ","), strings.Join(d.Files, " "))
	}
	return t.Flush()
}
