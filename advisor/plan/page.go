package plan

import (
	"bytes"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
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

// Chart draws the share of jobs that waited at most each time, today and
// under the proposal (and the MIG calculator's layout), as an SVG.
func (p *Plan) Chart() ([]byte, error) {
	pl := plot.New()
	pl.Title.Text = "Jobs that waited at most"
	pl.X.Label.Text = "wait (hours)"
	pl.Y.Label.Text = "share of jobs"
	pl.Y.Min, pl.Y.Max = 0, 1
	pl.Legend.Top = false
	type line struct {
		label string
		o     *Outcome
		c     color.Color
	}
	lines := []line{{"today: " + p.Current.Layout, p.Current, color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}}}
	if p.Proposed != nil {
		lines = append(lines, line{"proposed: " + p.Proposed.Layout, p.Proposed, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}})
	}
	if c := p.Calculator; c != nil && c.Outcome != nil {
		lines = append(lines, line{"MIG calculator: " + c.Outcome.Layout, c.Outcome, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}})
	}
	for _, l := range lines {
		xy := waitCDF(l.o)
		if len(xy) == 0 {
			continue
		}
		lp, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("plan chart: %w", err)
		}
		lp.Color, lp.Width = l.c, vg.Points(1.5)
		pl.Add(lp)
		pl.Legend.Add(shorten(l.label, 70), lp)
	}
	canvas := vgsvg.New(7*vg.Inch, 4*vg.Inch)
	pl.Draw(draw.New(canvas))
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plan chart: %w", err)
	}
	return buf.Bytes(), nil
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
