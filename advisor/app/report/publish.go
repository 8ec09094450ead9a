package report

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/atomicfile"
	"github.com/migadvisor/migadvisor/internal/suggest"
	"github.com/migadvisor/migadvisor/internal/textutil"
)

// Source is the history a publication reads: its workloads and their runs.
type Source interface {
	Workloads(ctx context.Context) ([]history.WorkloadCount, error)
	History(ctx context.Context, f history.HistoryFilter) ([]history.JobRecord, error)
	Path() string
}

// PublishOptions say which workloads to publish, and where and how.
type PublishOptions struct {
	Site *catalog.Site
	Want []string // workload tags; none: every workload in the history
	Dir  string   // the pages, charts and index (and the CSVs unless Page.CSVDir)
	Page PageOptions
	// Describe gives a tag its title, description and table layout (a
	// built-in suite's workload); nil, or a Workload of the tag alone: the
	// generic table, titled with the tag.
	Describe func(tag string) Workload
}

// Written is a workload's report and the files written of it.
type Written struct {
	Report *Report
	Files  []string
}

// Published is what a publication wrote, workload by workload.
type Published struct {
	Written []Written
	Skipped []string // workloads with no ended single-GPU run yet: nothing written
}

// ErrNoWorkloads is a history none of whose jobs is tagged with a workload.
var ErrNoWorkloads = errors.New("no jobs tagged with a workload")

// UnknownWorkloadError is a workload asked for that the history has no jobs
// of: its message names the closest it has, and every one.
type UnknownWorkloadError struct {
	History string   // its path
	Tag     string   // the workload asked for
	Have    []string // the workloads it has
}

func (e *UnknownWorkloadError) Error() string {
	have := strings.Join(e.Have, ", ")
	if have == "" {
		have = "-"
	}
	if near := suggest.Names(e.Tag, e.Have, 1); len(near) > 0 {
		return fmt.Sprintf("%s has no jobs tagged %q (did you mean %q? it has: %s)", e.History, e.Tag, near[0], have)
	}
	return fmt.Sprintf("%s has no jobs tagged %q (it has: %s)", e.History, e.Tag, have)
}

// ErrNoHistory is a history that is not there to publish.
var ErrNoHistory = errors.New("no history")

// PublishHistory is Publish of the history at db, opened to read and
// closed after (ErrNoHistory where there is none).
func PublishHistory(ctx context.Context, db string, opt PublishOptions) (Published, error) {
	st, err := history.OpenWith(ctx, db, history.Options{ReadOnly: true})
	if errors.Is(err, fs.ErrNotExist) {
		return Published{}, fmt.Errorf("%w at %s", ErrNoHistory, db)
	}
	if err != nil {
		return Published{}, err
	}
	defer st.Close()
	return Publish(ctx, st, opt)
}

// Publish writes the report of each workload asked for (Write), then
// index.md listing them unless the format is CSV alone. A workload with no
// ended single-GPU run is skipped; with none written, nothing is.
func Publish(ctx context.Context, src Source, opt PublishOptions) (Published, error) {
	var out Published
	tags, err := chooseWorkloads(ctx, src, opt.Want)
	if err != nil {
		return out, err
	}
	var reps []*Report
	names := map[string]string{} // file name: the tag written there
	for _, tag := range tags {
		rep, err := buildWorkload(ctx, src, opt, tag)
		if err != nil {
			return out, err
		}
		if len(rep.Profiles) == 0 {
			out.Skipped = append(out.Skipped, tag)
			continue
		}
		if other, ok := names[rep.FileName()]; ok {
			// FileName's hashes make this all but impossible; were it to
			// happen, one workload's files must not silently replace another's.
			return out, fmt.Errorf("workloads %q and %q would both be written as %s", other, tag, rep.FileName())
		}
		names[rep.FileName()] = tag
		if len(reps) == 0 { // the first report to write: only now the directories
			if err := makeDirs(opt.Dir, opt.Page.CSVDir); err != nil {
				return out, err
			}
		}
		files, err := rep.Write(opt.Dir, opt.Page)
		if err != nil {
			return out, err
		}
		reps = append(reps, rep)
		out.Written = append(out.Written, Written{Report: rep, Files: files})
	}
	if len(reps) > 0 && opt.Page.Format != FormatCSV {
		if err := writeIndex(opt, reps); err != nil {
			return out, err
		}
	}
	return out, nil
}

// chooseWorkloads are the workloads asked for, each of which the history
// must have (*UnknownWorkloadError), else every one it has (ErrNoWorkloads
// when it has none).
func chooseWorkloads(ctx context.Context, src Source, want []string) ([]string, error) {
	known, err := src.Workloads(ctx)
	if err != nil {
		return nil, err
	}
	var have []string
	for _, w := range known {
		have = append(have, w.Workload)
	}
	if len(want) == 0 {
		if len(have) == 0 {
			return nil, fmt.Errorf("%s has %w", src.Path(), ErrNoWorkloads)
		}
		return have, nil
	}
	for _, w := range want {
		if !slices.Contains(have, w) {
			return nil, &UnknownWorkloadError{History: src.Path(), Tag: w, Have: have}
		}
	}
	return want, nil
}

// buildWorkload reads a workload's runs into its report.
func buildWorkload(ctx context.Context, src Source, opt PublishOptions, tag string) (*Report, error) {
	recs, err := src.History(ctx, history.HistoryFilter{Workload: tag})
	if err != nil {
		return nil, err
	}
	w := Workload{Tag: tag}
	if opt.Describe != nil {
		w = opt.Describe(tag)
		w.Tag = tag
	}
	return Build(opt.Site, w, recs)
}

// Write writes the report's files in the format into dir and returns their
// paths: the CSV (into opt.CSVDir, where the page reads it), then the chart
// and the page unless the format is CSV alone.
func (rep *Report) Write(dir string, opt PageOptions) ([]string, error) {
	base := filepath.Join(dir, rep.FileName())
	csv, err := rep.CSV()
	if err != nil {
		return nil, err
	}
	csvPath := filepath.Join(opt.CSVDir, rep.FileName()+".csv")
	files := map[string][]byte{csvPath: csv}
	if opt.Format != FormatCSV {
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

// IndexPage is index.md: the site's workloads, each linked to its page
// with its first takeaway.
func IndexPage(reps []*Report, site *catalog.Site, opt PageOptions) string {
	var entries []indexEntry
	for _, rep := range reps {
		entries = append(entries, indexEntry{name: rep.FileName(), text: rep.indexEntry(site)})
	}
	return indexPageOf(entries, site, opt)
}

// indexPageOf is index.md of its entries, in their order.
func indexPageOf(entries []indexEntry, site *catalog.Site, opt PageOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# GPU profile benchmarks at %s\n\n", site.Called())
	fmt.Fprintf(&b, "Each workload below was run on %s's GPU profiles and measured: runtime, "+
		"GPU memory, service units (SU), and the work done.\n\n", site.Called())
	for _, e := range entries {
		b.WriteString(e.text)
	}
	fmt.Fprintf(&b, "%s %s on %s.\n", indexFooter, opt.Generator, opt.Generated.UTC().Format("2006-01-02"))
	return b.String()
}

// indexEntry is the workload's part of index.md: its page linked, where
// it was measured, and its first takeaway.
func (rep *Report) indexEntry(site *catalog.Site) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## [%s](%s.md)\n\n", markdownText(rep.Workload.Title), rep.FileName())
	fmt.Fprintf(&b, "Measured on %s", textutil.JoinAnd(rep.profileNames()))
	if other := rep.OtherDevices(); len(other) > 0 {
		fmt.Fprintf(&b, ", though the runs reported %s, not the %s", markdownText(textutil.JoinAnd(other)), site.GPUModel)
	}
	b.WriteString(".\n\n")
	if t, err := rep.Takeaways(); err == nil && len(t) > 0 {
		fmt.Fprintf(&b, "%s\n\n", t[0])
	}
	return b.String()
}

// profileNames are the profiles the workload ran on, smallest first.
func (rep *Report) profileNames() []string {
	names := make([]string, len(rep.Profiles))
	for i, pr := range rep.Profiles {
		names[i] = pr.Profile.Name
	}
	return names
}

// makeDirs creates the directories the reports go to.
func makeDirs(dirs ...string) error {
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
	}
	return nil
}
