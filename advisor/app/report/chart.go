package report

import (
	"bytes"
	"fmt"
	"image/color"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/migadvisor/migadvisor/catalog"
)

// Chart colours: one per panel, readable in light and dark docs themes.
var (
	runtimeColour = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	suColour      = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
)

// Chart draws the report as an SVG: runtime and SU of a run per profile,
// side by side, smallest profile first; a profile that ran out of memory
// shows OOM instead of a bar. Runs that reported their work as a rate
// (ns/day) are drawn by it and by the SU of a unit of the work done: their
// wall times and the SU of a run compare runs of different lengths.
func (rep *Report) Chart() ([]byte, error) {
	l, err := rep.layout()
	if err != nil {
		return nil, err
	}
	if len(rep.Profiles) == 0 {
		return nil, fmt.Errorf("no runs to chart")
	}
	rateUnit := rep.rateUnit()
	var names []string
	var speeds, sus []float64
	var oom []bool
	for _, pr := range rep.Profiles {
		names = append(names, pr.Profile.Name)
		speed, su := runtimeAndSU(l, pr)
		if rateUnit != "" {
			speed, su = rateAndSUPerWork(pr, rateUnit)
		}
		if pr.OOM {
			speed, su = -1, -1
		}
		speeds, sus = append(speeds, speed), append(sus, su)
		oom = append(oom, pr.OOM)
	}
	leftTitle, leftUnit, leftFormat := rep.Workload.Title+": runtime", "seconds", fixed(1)
	rightTitle, rightUnit := rep.Workload.Title+": cost of a run", "SU"
	if rateUnit != "" {
		leftTitle, leftUnit, leftFormat = rep.Workload.Title+": rate", rateUnit, trimZeros3
		rightTitle, rightUnit = rep.Workload.Title+": cost of the work", "SU per "+rep.DoneUnit()
	}
	left, err := barPlot(leftTitle, leftUnit, names, speeds, oom, runtimeColour, leftFormat)
	if err != nil {
		return nil, err
	}
	right, err := barPlot(rightTitle, rightUnit, names, sus, oom, suColour, catalog.FormatSU)
	if err != nil {
		return nil, err
	}
	const width, height = 9 * vg.Inch, 3.6 * vg.Inch
	img := vgsvg.New(width, height)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(24), PadTop: vg.Points(8), PadBottom: vg.Points(8),
		PadLeft: vg.Points(8), PadRight: vg.Points(8)}
	canvases := plot.Align([][]*plot.Plot{{left, right}}, tiles, dc)
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
	var b bytes.Buffer
	if _, err := img.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// runtimeAndSU are a profile's run time, as its table reports it, and the
// SU of a run; -1 each where no run completed.
func runtimeAndSU(l layout, pr *ProfileResult) (seconds, su float64) {
	d := l.duration(pr)
	if d < 0 {
		return -1, -1
	}
	return d, pr.Rate * d / 3600
}

// rateAndSUPerWork are a profile's rate in unit (ns/day) and the SU of a
// unit of the work done; -1 each where unknown.
func rateAndSUPerWork(pr *ProfileResult, unit string) (rate, su float64) {
	if pr.WorkUnit != unit || pr.Work <= 0 || pr.Seconds < 0 {
		return -1, -1
	}
	return pr.Work, pr.SUPerWork()
}

// trimZeros3 writes a rate with at most three decimals: 118.6, 100.
func trimZeros3(v float64) string { return trimZeros(strconv.FormatFloat(v, 'f', 3, 64)) }

// fixed writes a figure with so many decimals: 182.0.
func fixed(decimals int) func(float64) string {
	return func(v float64) string { return strconv.FormatFloat(v, 'f', decimals, 64) }
}

// barPlot is one panel: a bar per profile with its value, as format writes
// it, above it.
func barPlot(title, unit string, names []string, values []float64, oom []bool, c color.Color, format func(float64) string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = unit
	p.Y.Min = 0
	p.NominalX(names...)
	bars := make(plotter.Values, len(values))
	labels := plotter.XYLabels{}
	top := 0.0
	for i, v := range values {
		bars[i] = max(v, 0)
		top = max(top, v)
	}
	for i, v := range values {
		text := format(v)
		switch {
		case oom[i]:
			text = "OOM"
		case v < 0:
			text = "n/a"
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: float64(i), Y: bars[i] + top*0.02})
		labels.Labels = append(labels.Labels, text)
	}
	bc, err := plotter.NewBarChart(bars, vg.Points(28))
	if err != nil {
		return nil, err
	}
	bc.Color = c
	bc.LineStyle.Width = 0
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return nil, err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].XAlign = draw.XCenter
	}
	p.Add(bc, lb)
	p.Y.Max = top * 1.15
	plainYAxis(p, top)
	if top <= 0 {
		p.Title.Text += " (no completed run)"
	}
	return p, nil
}

// plainYAxis writes the y axis's ticks without needless decimals (2500,
// not 2500.00) and, where no bar stands higher than 0, shows none: an axis
// of 0, 5e-10 and 1e-09 would read as measured.
func plainYAxis(p *plot.Plot, top float64) {
	if top <= 0 {
		p.Y.Max = 1
		p.Y.Tick.Marker = plot.ConstantTicks(nil)
		return
	}
	p.Y.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		ticks := plot.DefaultTicks{}.Ticks(lo, hi)
		for i := range ticks {
			if l := ticks[i].Label; !strings.ContainsAny(l, "eE") {
				ticks[i].Label = trimZeros(l)
			}
		}
		return ticks
	})
}
