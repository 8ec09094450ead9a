package accuracy

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
)

// A job busy 4/7 of its time on half the SMs, its fixed part 0.6 of its
// time on the whole GPU, is busy 40% of the time there; its memory
// utilization keeps its ratio to the GPU's.
func TestBusyOnAnotherProfile(t *testing.T) {
	half := catalog.Shares{SM: 0.5, Bandwidth: 0.5}
	b := Busy{GPU: 100 * 0.8 / 1.4, Memory: 10, At: half}
	gpu, memory := b.On(catalog.Shares{SM: 1, Bandwidth: 1})
	if math.Abs(gpu-40) > 1e-9 || math.Abs(memory/gpu-10/b.GPU) > 1e-9 {
		t.Errorf("on the whole GPU: %.2f%% busy, memory %.2f%%", gpu, memory)
	}
	if gpu, _ := b.On(half); math.Abs(gpu-b.GPU) > 1e-9 {
		t.Errorf("on its own shares: %.2f%%, not %.2f%%", gpu, b.GPU)
	}
}

// A job whose busy time all scales with the SMs, the rest fixed, is what
// the utilization describes: from the utilization on any profile it ran
// on, each other profile's time is predicted exactly, and only the trials
// whose known profile has a utilization are scored, the baselines on the
// same trials.
func TestUtilizationIsExactOnAJobItDescribes(t *testing.T) {
	site := catalogtest.Wulver(t)
	const f = 0.7
	c := Case{Name: "amdahl"}
	busy := map[string]Busy{}
	for _, name := range []string{"1g.10gb", "2g.20gb", "3g.40gb", "full"} {
		p, _ := site.Profile(name)
		sh := site.Shares(p)
		c.Points = append(c.Points, runmodel.Point{Profile: name, Shares: sh, Seconds: 100 * (f + (1-f)/sh.SM)})
		if name != "1g.10gb" {
			busy[name] = Busy{GPU: 100 * ((1 - f) / sh.SM) / (f + (1-f)/sh.SM), Memory: 1, At: sh}
		}
	}
	rows := CompareUtilization(site, "synthetic", []Case{c}, map[string]map[string]Busy{"amdahl": busy})
	if len(rows) != 2 || rows[0].Known != UtilizationFromAny || rows[1].Known != UtilizationFromWhole {
		t.Fatalf("rows %+v", rows)
	}
	if any, whole := rows[0], rows[1]; any.Model.Trials != 3*3 || whole.Model.Trials != 3 || any.Model.MAPE > 1e-9 || whole.Model.MAPE > 1e-9 {
		t.Errorf("from any profile %+v, from the whole GPU %+v", any.Model, whole.Model)
	}
	for _, r := range rows {
		for _, b := range r.Baselines {
			if b.Trials != r.Model.Trials {
				t.Errorf("%s: %s on %d trials, the model on %d", r.Known, b.Name, b.Trials, r.Model.Trials)
			}
		}
	}
}

// utilizationCases are Wulver's reference benchmarks and the utilization
// the training workloads of the emulation gate had on each profile in a
// capture (their emulations: the median of each figure over the repeats).
func utilizationCases(t *testing.T, site *catalog.Site, capture string) map[string]map[string]Busy {
	t.Helper()
	entries, err := os.ReadDir(capture)
	if err != nil {
		t.Fatal(err)
	}
	busy := map[string]map[string]Busy{}
	for _, w := range EmulationGate {
		if w.Role != Training {
			continue
		}
		var dirs []string
		for _, e := range entries {
			if e.IsDir() && w.captures(e.Name()) {
				dirs = append(dirs, filepath.Join(capture, e.Name()))
			}
		}
		b, err := ReadBusy(site, dirs...)
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %s: %d profiles, %v", capture, w.Dir, len(b), err)
		}
		busy[w.Published] = b
	}
	return busy
}

// The utilization scored on Wulver's published times, with the reference
// workloads' utilization from each capture (make accuracy prints it):
// each row whole, every predictor on the model's trials, and what
// docs/how-it-works/accuracy.md says of it what the rows are. Nothing here
// asks the model to win.
func TestAccuracyOfUtilization(t *testing.T) {
	site := catalogtest.Wulver(t)
	var rows []UtilizationRow
	for _, capture := range []struct{ dir, title string }{{gateCapture, "gate"}, {developmentCapture, "development"}} {
		rows = append(rows, CompareUtilization(site, capture.title, ReferenceCases(site), utilizationCases(t, site, capture.dir))...)
	}
	var out strings.Builder
	if err := PrintUtilization(&out, rows); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if len(rows) != 4 {
		t.Fatalf("%d rows, want any profile and the whole GPU for each capture", len(rows))
	}
	for _, r := range rows {
		complete(t, Row{Set: r.Capture, Protocol: r.Known, Model: r.Model, Baselines: r.Baselines, BestBaseline: r.Best().Name, Before: r.Baselines[0].Score})
		if r.Known == UtilizationFromWhole && r.Model.Trials != 3 {
			t.Errorf("%s from the whole GPU: %d trials, want the LLM fine-tuning's 3 (the only table of a training job with one)", r.Capture, r.Model.Trials)
		}
	}
	checkUtilizationDoc(t, rows)
}

// checkUtilizationDoc fails where docs/how-it-works/accuracy.md does not
// hold the rows' table as utilizationMarkdown writes it, and a line per
// row saying where the model beats the best baseline and where not.
func checkUtilizationDoc(t *testing.T, rows []UtilizationRow) {
	t.Helper()
	doc, err := os.ReadFile(accuracyDoc)
	if err != nil {
		t.Fatal(err)
	}
	table, lines := utilizationMarkdown(rows)
	for _, want := range []string{table, lines} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("%s does not say what the utilization's scores are; it should hold:\n%s", accuracyDoc, want)
		}
	}
}

// utilizationMarkdown is the rows as the doc's table, and a line each.
func utilizationMarkdown(rows []UtilizationRow) (table, lines string) {
	var s, l strings.Builder
	s.WriteString("| capture | known | trials | with the utilization")
	for _, b := range rows[0].Baselines {
		s.WriteString(" | " + b.Name)
	}
	s.WriteString(" | best baseline | beats it |\n|" + strings.Repeat("---|", 6+len(rows[0].Baselines)) + "\n")
	for _, r := range rows {
		fmt.Fprintf(&s, "| %s | %s | %d | %s", r.Capture, r.Known, r.Model.Trials, markdownScore(r.Model))
		for _, b := range r.Baselines {
			s.WriteString(" | " + markdownScore(b.Score))
		}
		best := r.Best()
		fmt.Fprintf(&s, " | %s | %s |\n", best.Name, yesNo(r.Standing()))
		switch r.Standing() {
		case "beats":
			fmt.Fprintf(&l, "- %s, from %s: the utilization scores %.1f%%, the best baseline (%s) %.1f%%.\n", r.Capture, r.Known, r.Model.MAPE, best.Name, best.MAPE)
		case "matches":
			fmt.Fprintf(&l, "- %s, from %s: %s scores %.1f%%, as the utilization does.\n", r.Capture, r.Known, best.Name, best.MAPE)
		default:
			fmt.Fprintf(&l, "- %s, from %s: %s scores %.1f%% against the utilization's %.1f%%.\n", r.Capture, r.Known, best.Name, best.MAPE, r.Model.MAPE)
		}
	}
	return s.String(), l.String()
}
