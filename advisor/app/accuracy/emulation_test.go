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

const (
	// developmentCapture is the reference workloads emulated on an H100
	// while the runtime model was built (scripts/device/emulate-
	// workloads.sh); gateCapture the same, taken after the gate was fixed.
	developmentCapture = "../../../testdata/nvml/h100-emulate-workloads"
	gateCapture        = "../../../testdata/nvml/h100-emulate-gate"
	emulationDoc       = "../../../docs/how-it-works/emulation.md"
)

// publishedForEmulation is every case of Wulver's the gate's workloads are
// held to: its reference benchmarks, its matrix-multiplication table and a
// real slice's share of the memory system.
func publishedForEmulation(t *testing.T, site *catalog.Site) map[string]Case {
	published := map[string]Case{}
	for _, c := range append(ReferenceCases(site), wulverMatmul(t, site)...) {
		published[c.Name] = c
	}
	bandwidth := Case{Name: BandwidthShareCase}
	for _, p := range site.Profiles {
		bandwidth.Points = append(bandwidth.Points, runmodel.Point{Profile: p.Name, Shares: site.Shares(&p), Seconds: 1 / site.Shares(&p).Bandwidth})
	}
	published[bandwidth.Name] = bandwidth
	return published
}

// The emulation gate on both captures (make accuracy prints them): every
// workload of the gate yields its ratios, the measuring checks hold, and
// docs/how-it-works/emulation.md holds each capture's tables as they are
// and says, for each role, whether the model is claimed, by the scores.
// Nothing here asks the model to win.
func TestAccuracyOfEmulation(t *testing.T) {
	site := catalogtest.Wulver(t)
	published := publishedForEmulation(t, site)
	for _, capture := range []struct{ dir, title string }{
		{gateCapture, "the gate's capture"},
		{developmentCapture, "the development captures"},
	} {
		rows, err := ReadGated(site, capture.dir, published)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		if err := PrintGated(&out, rows); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s:\n%s", capture.title, out.String())
		for _, w := range EmulationGate {
			if !strings.Contains(out.String(), w.name()) {
				t.Errorf("%s: %s is not in the table", capture.title, w.name())
			}
		}
		if err := CheckMeasuring(rows); err != nil {
			t.Errorf("%s: %v", capture.title, err)
		}
		checkEmulationDoc(t, capture.title, rows)
		if capture.dir == gateCapture {
			checkReadmeOnEmulation(t, rows)
		}
	}
}

// checkReadmeOnEmulation fails where the README's paragraph on emulated
// slices (the one linking the emulation doc with figures) says a figure
// that is no score of the gate's capture, or has none.
func checkReadmeOnEmulation(t *testing.T, rows []GatedRatio) {
	t.Helper()
	figures := map[string]bool{}
	for _, s := range ScoreRoles(rows) {
		for _, m := range s.MAE {
			figures[fmt.Sprintf("%.1f%%", 100*m)] = true
		}
	}
	checkReadmeFigures(t, "(docs/how-it-works/emulation.md", "the emulation doc", figures)
	checkReadmeOrder(t, "(docs/how-it-works/emulation.md", readmeEmulationOrder(rows))
}

// readmeEmulationOrder is each figure of the README's emulation paragraph
// in the order its sentences say them: on the training jobs the corrected
// times, 1/√SM and the times as emulated; on matrix products the
// corrected times and the SM ratio (naive 1/SM).
func readmeEmulationOrder(rows []GatedRatio) []string {
	pct := func(m float64) string { return fmt.Sprintf("%.1f%%", 100*m) }
	var training, kernel RoleScore
	for _, s := range ScoreRoles(rows) {
		switch s.Role {
		case Training:
			training = s
		case Kernel:
			kernel = s
		}
	}
	return []string{pct(training.MAE[1]), pct(training.MAE[3]), pct(training.MAE[0]), pct(kernel.MAE[1]), pct(kernel.MAE[2])}
}

// checkEmulationDoc fails where the emulation doc does not hold the rows'
// two tables as emulationMarkdown writes them, or does not say for each
// role what the scores say.
func checkEmulationDoc(t *testing.T, title string, rows []GatedRatio) {
	t.Helper()
	doc, err := os.ReadFile(emulationDoc)
	if err != nil {
		t.Fatal(err)
	}
	ratios, scores := emulationMarkdown(rows)
	for _, want := range append([]string{ratios, scores}, emulationVerdicts(title, rows)...) {
		if !strings.Contains(string(doc), want) {
			t.Errorf("%s does not say what the scores on %s are; it should hold:\n%s", emulationDoc, title, want)
		}
	}
}

// emulationMarkdown is the rows as the doc's tables: each ratio beside its
// baselines, then each role's mean absolute errors.
func emulationMarkdown(rows []GatedRatio) (ratios, scores string) {
	var r, s strings.Builder
	r.WriteString("| role | workload | profile (over) | Wulver | as emulated | migadvisor | naive 1/SM | 1/√SM |\n|---|---|---|---|---|---|---|---|\n")
	for _, row := range rows {
		fmt.Fprintf(&r, "| %s | %s | %s (%s) | %.2f", row.Role, row.Workload, row.Profile, row.Against, row.Published)
		values := [4]float64{row.Plain, row.Corrected, row.SMRatio, row.SqrtSM}
		for i, e := range row.Errors() {
			fmt.Fprintf(&r, " | %.2f (%s)", values[i], signedPercent(e))
		}
		r.WriteString(" |\n")
	}
	s.WriteString("| role | rows | as emulated | migadvisor | naive 1/SM | 1/√SM | model claimed |\n|---|---|---|---|---|---|---|\n")
	for _, sc := range ScoreRoles(rows) {
		fmt.Fprintf(&s, "| %s | %d", sc.Role, sc.Rows)
		for _, m := range sc.MAE {
			fmt.Fprintf(&s, " | %.1f%%", 100*m)
		}
		claimed := "no"
		if sc.Claimed() {
			claimed = "yes"
		}
		if sc.Role == Measuring {
			claimed = "checks of the measuring"
		}
		fmt.Fprintf(&s, " | %s |\n", claimed)
	}
	return r.String(), s.String()
}

// emulationVerdicts are the sentences the doc must say of a capture: per
// role the model's error beside the best other's, and whether it is claimed.
func emulationVerdicts(title string, rows []GatedRatio) []string {
	var out []string
	for _, s := range ScoreRoles(rows) {
		if s.Role == Measuring {
			continue
		}
		name, best := s.Best()
		verb := "does not beat"
		if s.Claimed() {
			verb = "beats"
		}
		out = append(out, fmt.Sprintf("On %s, %s rows: the model (%.1f%%) %s %s (%.1f%%).", title, s.Role, 100*s.MAE[1], verb, name, 100*best))
	}
	return out
}

// signedPercent is a fraction as a whole percent with its sign, a minus
// sign for the negative.
func signedPercent(f float64) string {
	if math.Round(100*f) == 0 {
		return "0%"
	}
	return strings.Replace(fmt.Sprintf("%+.0f%%", 100*f), "-", "−", 1)
}

// The gate leaves nothing out: a capture holding a workload it does not
// name fails, and so does one where a workload of the gate yields no ratio
// (its emulations gone, or none of its runs completed).
func TestEmulationGateLeavesNothingOut(t *testing.T) {
	site := catalogtest.Wulver(t)
	published := publishedForEmulation(t, site)
	capture := copyCapture(t, developmentCapture)
	if _, err := ReadGated(site, capture, published); err != nil {
		t.Fatalf("the development capture, copied: %v", err)
	}
	stray := filepath.Join(capture, "gromacs")
	if err := os.Mkdir(stray, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadGated(site, capture, published); err == nil || !strings.Contains(err.Error(), "gromacs is no workload") {
		t.Errorf("a workload outside the gate: %v", err)
	}
	os.Remove(stray)
	for _, d := range []string{"resnet", "resnet-2", "resnet-3"} {
		if err := os.RemoveAll(filepath.Join(capture, d)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ReadGated(site, capture, published); err == nil || !strings.Contains(err.Error(), "pytorch_cifar10_resnet yields no ratio") {
		t.Errorf("a workload of the gate without its emulations: %v", err)
	}
	// "matmul" is not "matmul2", nor "mnist" "mnist-x".
	for dir, want := range map[string]bool{"matmul": true, "matmul-2": true, "matmul2": false, "matmul-x": false} {
		if got := EmulationGate[1].captures(dir); got != want {
			t.Errorf("matmul captures %s: %v", dir, got)
		}
	}
}

// copyCapture copies a capture's workload directories into a new one.
func copyCapture(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// A role's scores: each way's mean absolute error over its rows, the
// model claimed only below every other, the measuring checked apart.
func TestScoreRoles(t *testing.T) {
	row := func(role EmulationRole, plain, corrected, sm float64) GatedRatio {
		return GatedRatio{Ratio: Ratio{Published: 2, Plain: plain, Corrected: corrected}, Role: role, SMRatio: sm, SqrtSM: math.Sqrt(sm)}
	}
	rows := []GatedRatio{
		row(Training, 1, 2.2, 3), row(Training, 1.5, 1.8, 4), // model 10%, √SM (−13%, 0%) 6.7%
		row(Kernel, 1, 2.1, 2), row(Kernel, 1, 2.1, 2), // model 5%, 1/SM 0%
		row(Measuring, 1, 2.2, 2),
	}
	scores := ScoreRoles(rows)
	if len(scores) != 3 || scores[0].Role != Training || scores[0].Rows != 2 || math.Abs(scores[0].MAE[1]-0.1) > 1e-9 {
		t.Fatalf("%+v", scores)
	}
	if name, mae := scores[0].Best(); scores[0].Claimed() || name != "1/√SM" || math.Abs(mae-(1-math.Sqrt(3)/2)/2) > 1e-9 {
		t.Errorf("training: the model loses to 1/√SM: %v %s %v", scores[0].Claimed(), name, mae)
	}
	if name, _ := scores[1].Best(); scores[1].Claimed() || name != "naive 1/SM" {
		t.Errorf("kernels: the model loses to 1/SM: %v %s", scores[1].Claimed(), name)
	}
	rows[0].Corrected, rows[1].Corrected = 2, 2
	if !ScoreRoles(rows)[0].Claimed() {
		t.Error("training: the model exact, not claimed")
	}
	if err := CheckMeasuring(rows); err == nil || !strings.Contains(err.Error(), "+10% off its construction") {
		t.Errorf("a measuring row 10%% off: %v", err)
	}
}
