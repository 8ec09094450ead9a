package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/internal/textutil"
)

// Formats 'migadvisor docs' writes.
const (
	FormatCSV    = "csv"    // the CSV tables only
	FormatMD     = "md"     // CSV, SVG and a plain Markdown page with the table in it
	FormatMkDocs = "mkdocs" // CSV, SVG and a page whose markdown-exec block reads the CSV
)

// Formats lists them, for flags.
var Formats = []string{FormatCSV, FormatMD, FormatMkDocs}

// PageOptions say how a page is written.
type PageOptions struct {
	Format string
	// CSVDir is where the CSV was written, as the markdown-exec block (run
	// from the docs project's root) reads it; "" is beside the page. The
	// page names no CSV but the one written there.
	CSVDir    string
	Generator string    // "migadvisor v1.2.3"
	Generated time.Time // when
	History   string    // the history the figures come from
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._@+-]`)

// reservedNames are the base names of the files written beside the
// workloads' (lower case: a case-blind file system mixes them up too).
var reservedNames = map[string]bool{"index": true, SavingsName: true}

// longestName keeps a base name, with its suffix and extension, well under
// the 255 bytes a file system allows.
const longestName = 100

// FileName is the base name of the report's files: the workload tag where
// it is a safe name of its own, else the tag made safe (characters a file
// name should not hold replaced, leading dots, which hide a file from
// MkDocs, dropped) with a hash of the tag after it, so that no two tags
// share files, whichever are published together.
func (rep *Report) FileName() string { return fileNameOf(rep.Workload.Tag) }

func fileNameOf(tag string) string {
	name := strings.TrimLeft(unsafeName.ReplaceAllString(tag, "_"), ".")
	// A safe tag keeps its name, even one that ends as a made-safe name does
	// (gromacs-20240101): Publish refuses two workloads of one file name.
	if name != "" && name == tag && len(name) <= longestName && !reservedNames[strings.ToLower(name)] {
		return name
	}
	if name == "" {
		name = "workload"
	}
	sum := sha256.Sum256([]byte(tag))
	return name[:min(len(name), longestName)] + "-" + hex.EncodeToString(sum[:4])
}

// Page is the workload's Markdown page: description, table, chart,
// takeaways and provenance.
func (rep *Report) Page(opt PageOptions) (string, error) {
	rows, err := rep.Table()
	if err != nil {
		return "", err
	}
	takeaways, err := rep.Takeaways()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", markdownText(rep.Workload.Title))
	if d := rep.Workload.Description; d != "" {
		fmt.Fprintf(&b, "%s\n\n", d)
	}
	if opt.Format == FormatMkDocs {
		fmt.Fprintf(&b, "```python exec=\"on\"\nimport pandas as pd\nimport numpy as np\n"+
			"df = pd.read_csv(%q)\ndf.replace(np.nan, 'NA', inplace=True)\nprint(df.to_markdown(index=False))\n```\n\n",
			path.Join(filepath.ToSlash(opt.CSVDir), rep.FileName()+".csv"))
	} else {
		b.WriteString(MarkdownTable(textCells(rows)) + "\n")
	}
	fmt.Fprintf(&b, "![%s: runtime and SU per profile](%s.svg)\n\n", markdownText(rep.Workload.Title), rep.FileName())
	rep.suNote(&b, opt.Format)
	b.WriteString("## Key takeaways\n\n")
	for _, t := range takeaways {
		fmt.Fprintf(&b, "- %s\n", t)
	}
	b.WriteString("\n## Provenance\n\n")
	for _, p := range rep.Provenance(opt) {
		fmt.Fprintf(&b, "- %s\n", p)
	}
	return b.String(), nil
}

// textCells are the table's cells as text in Markdown: a metric's name
// is the job's, not markup.
func textCells(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, row := range rows {
		out[i] = make([]string, len(row))
		for j, c := range row {
			out[i][j] = markdownText(c)
		}
	}
	return out
}

// suNote says how the SU figures were computed, as the Wulver page does.
func (rep *Report) suNote(b *strings.Builder, format string) {
	text := fmt.Sprintf("SU are %s's list price for the runs' CPUs and memory on each profile%s.",
		rep.Site.Called(), rep.formulaText())
	if format == FormatMkDocs {
		fmt.Fprintf(b, "!!! note\n    %s\n\n", text)
		return
	}
	fmt.Fprintf(b, "> **Note:** %s\n\n", text)
}

func (rep *Report) formulaText() string {
	bl := rep.Site.Billing
	if bl.GPUWeight == 0 {
		return ""
	}
	cpus := "CPUs"
	if bl.MemoryPerCPU > 0 {
		cpus = fmt.Sprintf("max(CPUs, RAM / %s)", bl.MemoryPerCPU)
	}
	if bl.CPUWeight != 1 {
		cpus = trimF(bl.CPUWeight) + " × " + cpus
	}
	return fmt.Sprintf(": `SU = (%s + %s × GPU memory / %s) × hours`", cpus, trimF(bl.GPUWeight), bl.GPUMemory)
}

// Provenance says where the figures come from: the runs behind each row,
// when they ended, and the software they reported.
func (rep *Report) Provenance(opt PageOptions) []string {
	var out []string
	var runs []string
	var first, last time.Time
	for _, pr := range rep.Profiles {
		runs = append(runs, fmt.Sprintf("%s: %s (%s)", pr.Profile.Name, countText(pr), jobList(pr.JobIDs)))
		if !pr.First.IsZero() && (first.IsZero() || pr.First.Before(first)) {
			first = pr.First
		}
		if pr.Last.After(last) {
			last = pr.Last
		}
	}
	out = append(out, fmt.Sprintf("Workload %s at %s (%s), GPU %s.", codeSpan(rep.Workload.Tag), rep.Site.Called(), rep.Site.Name, rep.Site.GPUModel))
	if other := rep.OtherDevices(); len(other) > 0 {
		out = append(out, fmt.Sprintf("The runs reported running on %s, not on the %s: their times and memory are not that GPU's.",
			markdownText(textutil.JoinAnd(other)), rep.Site.GPUModel))
	}
	out = append(out, "Runs: "+strings.Join(runs, "; ")+". Figures are medians of the completed runs.")
	if !first.IsZero() {
		from, to := first.UTC().Format("2006-01-02"), last.UTC().Format("2006-01-02")
		if from == to {
			out = append(out, fmt.Sprintf("Ended on %s.", from))
		} else {
			out = append(out, fmt.Sprintf("Ended between %s and %s.", from, to))
		}
	}
	if v := rep.Versions(); len(v) > 0 {
		out = append(out, "Software: "+markdownText(strings.Join(v, "; "))+".")
	}
	return append(out, opt.generatedLine())
}

// generatedLine says what wrote a page, when, and from which history.
func (opt PageOptions) generatedLine() string {
	gen := "Generated"
	if opt.Generator != "" {
		gen += " by " + opt.Generator
	}
	if !opt.Generated.IsZero() {
		gen += " on " + opt.Generated.UTC().Format("2006-01-02")
	}
	if opt.History != "" {
		gen += " from " + path.Base(opt.History)
	}
	return gen + "."
}

func countText(pr *ProfileResult) string {
	s := fmt.Sprintf("%d run", pr.Runs)
	if pr.Runs != 1 {
		s += "s"
	}
	if pr.Completed != pr.Runs {
		s += fmt.Sprintf(", %d completed", pr.Completed)
	}
	return s
}

// jobList names the jobs, the first few and a count of the rest.
func jobList(ids []string) string { return textutil.JobsNamed(ids, 6) }

func trimF(v float64) string {
	return trimZeros(strconv.FormatFloat(v, 'f', 3, 64))
}
