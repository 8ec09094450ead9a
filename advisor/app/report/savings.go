package report

import (
	"bytes"
	"fmt"
	"image/color"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/migadvisor/migadvisor/advisor/app/savings"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/atomicfile"
	"github.com/migadvisor/migadvisor/internal/textutil"
)

// SavingsName is the base name of the savings page and chart.
const SavingsName = "gpu-savings"

// savingsTitle is the chart's title, and the page's image alt text.
func savingsTitle(rep *savings.Report) string {
	return "GPU SU per profile: spent, and " + movedWords(rep)
}

// movedWords names the jobs the chart's second series moves: those a
// larger slice would have cost less for are moved too, and a title of
// smaller slices alone would leave their saving unexplained.
func movedWords(rep *savings.Report) string {
	if rep.Total.Larger > 0 {
		return "had the jobs moved to a cheaper slice"
	}
	return "had the smaller-slice jobs moved"
}

// neededColour is the second series: distinct from suColour (spent) in
// light and dark docs themes.
var neededColour = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}

// SavingsPage is the site's Markdown page of where the GPU SU went in the
// report's period. Docs are often public: it names no user, job, script or
// fingerprint, only counts and SU.
func SavingsPage(rep *savings.Report, site *catalog.Site, opt PageOptions) (string, error) {
	if rep == nil || site == nil {
		return "", fmt.Errorf("savings page: no report or no site")
	}
	var b strings.Builder
	b.WriteString("# Where the GPU service units go\n\n")
	if rep.Total.Jobs == 0 {
		fmt.Fprintf(&b, "No GPU job at %s ended %s.\n\n", site.Called(), rep.Period())
	} else {
		b.WriteString(headline(rep, site) + "\n\n")
		b.WriteString(MarkdownTable(savingsRows(rep)) + "\n")
		if rep.Below.Scripts > 0 {
			b.WriteString(belowText(rep) + "\n\n")
		}
		if len(rep.Profiles) > 0 { // the chart is written only then
			fmt.Fprintf(&b, "![%s](%s.svg)\n\n", savingsTitle(rep), SavingsName)
		}
		writeNote(&b, opt.Format, savingsNote(site))
	}
	writeUnjudged(&b, rep.Unjudged)
	b.WriteString("## Provenance\n\n")
	for _, p := range savingsProvenance(rep, site, opt) {
		fmt.Fprintf(&b, "- %s\n", p)
	}
	return b.String(), nil
}

// headline is the paragraph of the cluster's figures: what the jobs
// spent, what the smaller slices and the larger ones would have cost, and
// what they save together, as the admins' report says it.
func headline(rep *savings.Report, site *catalog.Site) string {
	t := rep.Total
	s := fmt.Sprintf("%s at %s ended %s, and spent %s SU.",
		textutil.Plural(t.Jobs, "GPU job"), site.Called(), rep.Period(), catalog.FormatSU(t.SU))
	switch {
	case t.Smaller == 0:
		s += " None of them would have done as well on a smaller MIG slice."
	case t.Larger == 0:
		s += fmt.Sprintf(" A smaller MIG slice would have done %d of them, which spent %s SU and would have cost %s SU there: %s SU saved%s.",
			t.Smaller, catalog.FormatSU(t.SmallerSU), catalog.FormatSU(t.SmallerSUThere), catalog.FormatSU(t.Saved), shareText(t))
	default:
		s += fmt.Sprintf(" A smaller MIG slice would have done %d of them, which spent %s SU and would have cost %s SU there.",
			t.Smaller, catalog.FormatSU(t.SmallerSU), catalog.FormatSU(t.SmallerSUThere))
	}
	if t.Larger > 0 {
		s += fmt.Sprintf(" A larger MIG slice would have cost less for %s, which run that much faster there: they spent %s SU and would have cost %s SU there. "+
			"In all, %s SU saved%s.", textutil.Plural(t.Larger, "job"), catalog.FormatSU(t.LargerSU), catalog.FormatSU(t.LargerSUThere),
			catalog.FormatSU(t.Saved), shareText(t))
	}
	switch t.OOM {
	case 0:
		s += " No job ran out of GPU memory."
	default:
		s += fmt.Sprintf(" %s ran out of GPU memory, spending %s SU.", textutil.Plural(t.OOM, "job"), catalog.FormatSU(t.OOMSU))
	}
	return s
}

// shareText is the tally's saving as a share, in brackets; "" for none.
func shareText(t savings.Tally) string {
	if sh := t.SavedShare(); sh != "" {
		return " (" + sh + " of what the GPU jobs spent)"
	}
	return ""
}

// savingsRows is the table, the header first: a row per profile the jobs
// ran on, then the cluster's total in bold. Where a larger slice would
// have cost less for some jobs, their columns stand beside the smaller
// slices': SU saved counts both, and a row of no smaller-slice job would
// otherwise show a saving nothing beside it explains.
func savingsRows(rep *savings.Report) [][]string {
	larger := rep.Total.Larger > 0
	header := []string{"Profile", "Jobs", "SU spent", "Jobs a smaller slice would do", "Their SU", "SU on the recommended slice"}
	if larger {
		header = append(header[:5], "SU on the smaller slice", "Jobs a larger slice would do", "Their SU", "SU on the larger slice")
	}
	rows := [][]string{append(header, "SU saved", "Out of memory")}
	for _, p := range rep.Profiles {
		rows = append(rows, tallyRow(p.Profile, p.Tally, larger))
	}
	all := tallyRow("All", rep.Total, larger)
	for i, c := range all {
		all[i] = "**" + c + "**"
	}
	return append(rows, all)
}

// tallyRow is a row of the table; larger adds the larger slices' columns.
func tallyRow(label string, t savings.Tally, larger bool) []string {
	row := []string{label, strconv.Itoa(t.Jobs), catalog.FormatSU(t.SU), strconv.Itoa(t.Smaller), catalog.FormatSU(t.SmallerSU),
		catalog.FormatSU(t.SmallerSUThere)}
	if larger {
		row = append(row, strconv.Itoa(t.Larger), catalog.FormatSU(t.LargerSU), catalog.FormatSU(t.LargerSUThere))
	}
	return append(row, catalog.FormatSU(t.Saved), strconv.Itoa(t.OOM))
}

// belowText explains the moved jobs the admins' list leaves out: those of
// a larger slice among them where there are any.
func belowText(rep *savings.Report) string {
	slice := "a smaller slice"
	if rep.Total.Larger > 0 {
		slice = "a cheaper slice"
	}
	return fmt.Sprintf("%s under the site's thresholds (too little saved to tell their users) had %s %s would have done, "+
		"%s SU saved: they are in the figures above.",
		textutil.Plural(rep.Below.Scripts, "script"), textutil.Plural(rep.Below.Jobs, "job"), slice, catalog.FormatSU(rep.Below.Saved))
}

// savingsNote says how SU and the recommended slice's cost are computed.
func savingsNote(site *catalog.Site) string {
	return fmt.Sprintf("SU are %s's list price for each job's CPUs, memory and GPU profile as it ran%s. "+
		"A job a smaller slice would have done is one whose script migadvisor recommends that slice for, priced again there "+
		"for the runtime migadvisor's runtime model expects; the slice is a low risk of running out of GPU memory because the script "+
		"completed there or on a smaller slice, or because its GPU memory figure fits: a measured peak is what the jobs used, an "+
		"out-of-memory error's figure only a lower bound of what they need, and the peak of a framework that caches memory "+
		"(PyTorch) or takes it at its start (JAX, TensorFlow) only an upper bound. "+
		"Jobs in a QoS or partition the site does not charge count 0 SU.", site.Called(), siteFormula(site))
}

// siteFormula is the site's SU formula as the workload pages write it:
// formulaText reads nothing of a report but its site, so one wording
// serves both pages.
func siteFormula(site *catalog.Site) string {
	return (&Report{Site: site}).formulaText()
}

// writeNote writes text as an admonition MkDocs renders, else as a quote.
func writeNote(b *strings.Builder, format, text string) {
	if format == FormatMkDocs {
		fmt.Fprintf(b, "!!! note\n    %s\n\n", text)
		return
	}
	fmt.Fprintf(b, "> **Note:** %s\n\n", text)
}

// writeUnjudged lists why jobs went unjudged, with no example: those name
// users and jobs.
func writeUnjudged(b *strings.Builder, unjudged []savings.Unjudged) {
	if len(unjudged) == 0 {
		return
	}
	b.WriteString("## Not judged\n\nThese jobs are in the totals, but whether a smaller slice would have done them is unknown:\n\n")
	for _, u := range unjudged { // their examples name users: not here
		fmt.Fprintf(b, "- %s: %s, %s SU.\n", u.Reason, textutil.Plural(u.Jobs, "job"), catalog.FormatSU(u.SU))
	}
	b.WriteString("\n")
}

// savingsProvenance says what the figures rest on: the site, the
// thresholds, and what generated them from which history.
func savingsProvenance(rep *savings.Report, site *catalog.Site, opt PageOptions) []string {
	th := rep.Thresholds
	out := []string{
		fmt.Sprintf("Site: %s (%s), GPU %s.", site.Called(), site.Name, site.GPUModel),
		fmt.Sprintf("Thresholds: a script is judged once the history has %s of it, and listed for its user when a smaller slice would have saved at least %s SU in the period.",
			textutil.Plural(th.MinRuns, "run"), catalog.FormatSU(th.MinSUSaved)),
	}
	return append(out, opt.generatedLine())
}

// SavingsChart draws, per profile the jobs ran on, the SU they spent beside
// the SU they would have needed had the jobs moved run on the recommended
// slice, as an SVG the size of the workload charts.
func SavingsChart(rep *savings.Report) ([]byte, error) {
	if rep == nil || len(rep.Profiles) == 0 {
		return nil, fmt.Errorf("savings chart: no GPU jobs to chart")
	}
	p := plot.New()
	p.Title.Text = savingsTitle(rep)
	p.X.Label.Text = "profile the jobs ran on"
	p.Y.Label.Text = "SU"
	p.Y.Min = 0
	names := make([]string, len(rep.Profiles))
	spent, needed := make(plotter.Values, len(rep.Profiles)), make(plotter.Values, len(rep.Profiles))
	for i, pr := range rep.Profiles {
		names[i] = pr.Profile
		spent[i] = max(pr.SU, 0)
		needed[i] = max(catalog.RoundSU(pr.SU-pr.Saved), 0)
	}
	p.NominalX(names...)
	top := max(slicesMax(spent), slicesMax(needed))
	const width = 22 // points, each bar
	for _, s := range []struct {
		name   string
		values plotter.Values
		c      color.Color
		offset vg.Length
	}{
		{"SU spent", spent, suColour, -width / 2},
		{"SU " + movedWords(rep), needed, neededColour, width / 2},
	} {
		if err := addSeries(p, s.name, s.values, s.c, vg.Points(width), s.offset, top); err != nil {
			return nil, fmt.Errorf("savings chart: %w", err)
		}
	}
	p.Legend.Top = true
	// Room for the labels and the legend above the bars, and for the
	// outer bars of the first and last profile, which sit off their ticks.
	p.Y.Max = top * 1.3
	plainYAxis(p, top)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	return drawSVG(p)
}

// addSeries adds one series' bars, each labelled with its value above it.
func addSeries(p *plot.Plot, name string, values plotter.Values, c color.Color, width, offset vg.Length, top float64) error {
	bc, err := plotter.NewBarChart(values, width)
	if err != nil {
		return err
	}
	bc.Color, bc.LineStyle.Width, bc.Offset = c, 0, offset
	labels := plotter.XYLabels{}
	for i, v := range values {
		labels.XYs = append(labels.XYs, plotter.XY{X: float64(i), Y: v + top*0.02})
		labels.Labels = append(labels.Labels, catalog.FormatSU(v))
	}
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	lb.Offset.X = offset
	for i := range lb.TextStyle {
		lb.TextStyle[i].XAlign = draw.XCenter
	}
	p.Add(bc, lb)
	p.Legend.Add(name, bc)
	return nil
}

func slicesMax(v plotter.Values) float64 {
	top := 0.0
	for _, x := range v {
		top = max(top, x)
	}
	return top
}

// drawSVG renders one plot at the workload charts' size.
func drawSVG(p *plot.Plot) ([]byte, error) {
	const width, height = 9 * vg.Inch, 3.6 * vg.Inch
	img := vgsvg.New(width, height)
	p.Draw(draw.New(img))
	var b bytes.Buffer
	if _, err := img.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("savings chart: write the SVG: %w", err)
	}
	return b.Bytes(), nil
}

// WriteSavings writes dir/gpu-savings.md and, when any profile has jobs,
// dir/gpu-savings.svg (the page links the chart only then), creating dir;
// it returns the paths written. The format picks the page's note style.
func WriteSavings(dir string, rep *savings.Report, site *catalog.Site, opt PageOptions) ([]string, error) {
	page, err := SavingsPage(rep, site, opt)
	if err != nil {
		return nil, err
	}
	base := filepath.Join(dir, SavingsName)
	paths, data := []string{base + ".md"}, [][]byte{[]byte(page)}
	if len(rep.Profiles) > 0 {
		svg, err := SavingsChart(rep)
		if err != nil {
			return nil, err
		}
		paths, data = append(paths, base+".svg"), append(data, svg)
	}
	if err := makeDirs(dir); err != nil {
		return nil, err
	}
	for i, p := range paths {
		// atomicfile's error names the file; a reader of the docs never
		// sees half a page.
		if err := atomicfile.Write(p, data[i], 0o644); err != nil {
			return paths[:i], fmt.Errorf("savings page: %w", err)
		}
	}
	return paths, nil
}
