package plan

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/migadvisor/migadvisor/internal/atomicfile"
)

// WritePage writes the plan for the site's docs in dir: plan.md (the
// table, the proposal's slices, the steps), plan.svg (the wait
// distributions of today's layout and the proposal's), and the proposal's
// mig-parted.yaml, gres.conf and slurm.conf. It returns the files written.
func (p *Plan) WritePage(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plan page: %w", err)
	}
	var md bytes.Buffer
	md.WriteString("# The MIG layout from the site's demand\n\n![Waits on today's layout and on the proposal](plan.svg)\n\n```text\n")
	if err := p.WriteText(&md); err != nil {
		return nil, err
	}
	md.WriteString("```\n")
	files := map[string][]byte{"plan.md": md.Bytes()}
	svg, err := p.Chart()
	if err != nil {
		return nil, err
	}
	files["plan.svg"] = svg
	if c := p.Configs; c != nil {
		files["mig-parted.yaml"] = []byte(c.MigParted)
		files["gres.conf"] = []byte(c.GresConf)
		files["slurm.conf"] = []byte(c.SlurmConf)
	}
	var written []string
	for _, name := range []string{"plan.md", "plan.svg", "mig-parted.yaml", "gres.conf", "slurm.conf"} {
		data, ok := files[name]
		if !ok {
			continue
		}
		path := filepath.Join(dir, name)
		if err := atomicfile.Write(path, data, 0o644); err != nil {
			return written, fmt.Errorf("plan page: %w", err)
		}
		written = append(written, path)
	}
	return written, nil
}

// Chart draws today's layout against the proposal as an SVG: on the left
// the slices of each profile each offers (and the MIG calculator's), on
// the right the share of jobs that waited at most each time under each.
func (p *Plan) Chart() ([]byte, error) {
	type line struct {
		label string
		o     *Outcome
		c     color.Color
	}
	lines := []line{{"today", p.Current, color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}}}
	if p.Proposed != nil {
		lines = append(lines, line{"proposed", p.Proposed, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}})
	}
	if c := p.Calculator; c != nil && c.Outcome != nil && c.GPUs > 0 {
		lines = append(lines, line{"MIG calculator", c.Outcome, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}})
	}
	slicesPlot, waitsPlot := plot.New(), plot.New()
	slicesPlot.Title.Text = "Slices of each profile"
	slicesPlot.Y.Label.Text = "slices"
	slicesPlot.Y.Min = 0
	profiles := p.profilesShown()
	slicesPlot.NominalX(profiles...)
	waitsPlot.Title.Text = "Jobs that waited at most"
	waitsPlot.X.Label.Text = "wait (hours)"
	waitsPlot.Y.Label.Text = "share of jobs"
	waitsPlot.Y.Min, waitsPlot.Y.Max = 0, 1
	waitsPlot.Legend.Top = false
	width := vg.Points(float64(36 / len(lines)))
	for i, l := range lines {
		bc, err := plotter.NewBarChart(slicesOf(l.o, profiles), width)
		if err != nil {
			return nil, fmt.Errorf("plan chart: %w", err)
		}
		bc.Color, bc.LineStyle.Width = l.c, 0
		bc.Offset = width * vg.Length(float64(i)-float64(len(lines)-1)/2)
		slicesPlot.Add(bc)
		slicesPlot.Legend.Add(l.label, bc)
		if xy := waitCDF(l.o); len(xy) > 0 {
			lp, err := plotter.NewLine(xy)
			if err != nil {
				return nil, fmt.Errorf("plan chart: %w", err)
			}
			lp.Color, lp.Width = l.c, vg.Points(1.5)
			waitsPlot.Add(lp)
			waitsPlot.Legend.Add(shorten(l.label+": "+l.o.Layout, 60), lp)
		}
	}
	slicesPlot.Legend.Top = true
	const w, h = 10 * vg.Inch, 4 * vg.Inch
	img := vgsvg.New(w, h)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(24), PadTop: vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(8), PadRight: vg.Points(8)}
	canvases := plot.Align([][]*plot.Plot{{slicesPlot, waitsPlot}}, tiles, draw.New(img))
	slicesPlot.Draw(canvases[0][0])
	waitsPlot.Draw(canvases[0][1])
	var buf bytes.Buffer
	if _, err := img.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plan chart: %w", err)
	}
	return buf.Bytes(), nil
}

// profilesShown are the profiles any shown layout offers, smallest first.
func (p *Plan) profilesShown() []string {
	var out []string
	for _, o := range p.shown() {
		for _, ps := range o.Profiles {
			if ps.Slots > 0 && !slices.Contains(out, ps.Profile) {
				out = append(out, ps.Profile)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(p.rank[a], p.rank[b]) })
	return out
}

// slicesOf counts the outcome's slices of each profile.
func slicesOf(o *Outcome, profiles []string) plotter.Values {
	v := make(plotter.Values, len(profiles))
	for _, ps := range o.Profiles {
		if i := slices.Index(profiles, ps.Profile); i >= 0 {
			v[i] = float64(ps.Slots)
		}
	}
	return v
}

// waitCDF is the outcome's waits as a step line: hours, share.
func waitCDF(o *Outcome) plotter.XYs {
	if len(o.waits) == 0 {
		return nil
	}
	xy := plotter.XYs{{X: 0, Y: 0}}
	for i, w := range o.waits { // sorted
		if i+1 < len(o.waits) && o.waits[i+1] == w {
			continue
		}
		xy = append(xy, plotter.XY{X: float64(w) / 3600, Y: float64(i+1) / float64(len(o.waits))})
	}
	return xy
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.TrimSpace(s[:n-1]) + "…"
}
