package report

import (
	"regexp"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

var (
	svgText       = regexp.MustCompile(`>([^<>]+)</text>`)
	needlessZeros = regexp.MustCompile(`^-?\d+\.0+$|^-?\d+\.\d*[1-9]0+$`)
	runtimeLabel  = regexp.MustCompile(`^\d+\.\d$`) // a runtime bar's label keeps its one decimal: 182.0 s
)

// svgTexts are the texts an SVG shows.
func svgTexts(svg []byte) []string {
	var out []string
	for _, m := range svgText.FindAllSubmatch(svg, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// The axes' ticks carry no needless decimals (seen: 0.00, 2500.00, 5000.00
// on the savings chart).
func TestChartTicksHaveNoNeedlessDecimals(t *testing.T) {
	rep := savingsReport()
	rep.Profiles[1].SU = 5000
	savingsSVG, err := SavingsChart(rep)
	if err != nil {
		t.Fatal(err)
	}
	workload := llmReport(t, "llm")
	workloadSVG, err := workload.Chart()
	if err != nil {
		t.Fatal(err)
	}
	for what, svg := range map[string][]byte{"savings": savingsSVG, "workload": workloadSVG} {
		texts := svgTexts(svg)
		if len(texts) == 0 {
			t.Fatalf("no text in the %s chart", what)
		}
		for _, s := range texts {
			if needlessZeros.MatchString(s) && !(what == "workload" && runtimeLabel.MatchString(s)) {
				t.Errorf("the %s chart shows %q", what, s)
			}
		}
	}
}

// A chart with no completed run says so, and has no axis of 0, 5e-10 and
// 1e-09 that would read as measured.
func TestChartOfNoCompletedRunSaysSo(t *testing.T) {
	site, _ := wulverSite(t)
	run := samplesRun("1", "1g.10gb", 68, 2.4e6, 2150)
	run.State = "TIMEOUT"
	rep, err := Build(site, Workload{Tag: "w"}, []history.JobRecord{run})
	if err != nil {
		t.Fatal(err)
	}
	svg, err := rep.Chart()
	if err != nil {
		t.Fatal(err)
	}
	var titled bool
	for _, s := range svgTexts(svg) {
		if regexp.MustCompile(`\de-?\d`).MatchString(s) || s == "0" {
			t.Errorf("the chart shows %q", s)
		}
		titled = titled || s == "w: runtime (no completed run)"
	}
	if !titled {
		t.Errorf("the chart does not say no run completed: %q", svgTexts(svg))
	}
}

// Runs that report a rate are charted by it and by the SU of the work
// done, not by wall times that compare runs of different lengths (seen:
// 10000 s against 500 s beside 100 and 110 ns/day).
func TestTheChartOfARateShowsTheRateAndTheCostOfTheWork(t *testing.T) {
	rep, _ := rateReport(t)
	svg, err := rep.Chart()
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]bool{}
	for _, s := range svgTexts(svg) {
		texts[s] = true
	}
	for _, want := range []string{"100", "110", "0.72", "3.71", "ns/day", "SU per ns"} {
		if !texts[want] {
			t.Errorf("the chart lacks %q: %q", want, svgTexts(svg))
		}
	}
	for _, wrong := range []string{"10000.0", "500.0"} {
		if texts[wrong] {
			t.Errorf("the chart shows the wall time %q: %q", wrong, svgTexts(svg))
		}
	}
}
