package accuracy

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

const (
	accuracyDoc = "../../../docs/how-it-works/accuracy.md"
	readme      = "../../../README.md"
)

// checkDocs fails where docs/how-it-works/accuracy.md or the README says
// other than the rows: the doc's two tables must be the rows' as
// markdownTables writes them, whole (so its "beats it" column is the
// computed one), each row must be said in a line of the doc, where the
// model beats the best baseline and where it does not (standings), and each figure of
// the README's accuracy paragraph must be a score of the rows. extra are
// further phrases the doc must hold.
func checkDocs(t *testing.T, rows []Row, extra ...string) {
	t.Helper()
	doc, err := os.ReadFile(accuracyDoc)
	if err != nil {
		t.Fatal(err)
	}
	scores, ranges := markdownTables(rows)
	wins, losses := standings(rows)
	for _, want := range append([]string{scores, ranges, wins, losses}, extra...) {
		if !strings.Contains(string(doc), want) {
			t.Errorf("%s does not say what the scores are; it should hold:\n%s", accuracyDoc, want)
		}
	}
	figures := map[string]bool{}
	for _, r := range rows {
		for _, s := range append([]Score{r.Model}, scoresOf(r.Baselines)...) {
			figures[fmt.Sprintf("%.1f%%", s.MAPE)] = true
		}
	}
	checkReadmeFigures(t, "(docs/how-it-works/accuracy.md)", "the accuracy doc", figures)
	checkReadmeOrder(t, "(docs/how-it-works/accuracy.md)", readmeAccuracyOrder(rows))
}

// readmeAccuracyOrder is each figure of the README's accuracy paragraph in
// the order its sentences say them: on the workloads, the model then the
// best baseline with all but one profile known, with two known and over
// all trials; the best baseline then the model from one known; on matrix
// multiplication over all trials, the best baseline then the model. A
// figure in the wrong place (two swapped) is a claim of the other's.
func readmeAccuracyOrder(rows []Row) []string {
	pct := func(s Score) string { return fmt.Sprintf("%.1f%%", s.MAPE) }
	find := func(set, protocol string) Row {
		for _, r := range rows {
			if r.Set == set && r.Protocol == protocol {
				return r
			}
		}
		return Row{}
	}
	var out []string
	for _, p := range []string{LeaveOneOut.String(), TwoKnown.String(), Overall} {
		r := find("workloads", p)
		out = append(out, pct(r.Model), pct(r.Best().Score))
	}
	one := find("workloads", OneKnown.String())
	mm := find("matmul", Overall)
	return append(out, pct(one.Best().Score), pct(one.Model), pct(mm.Best().Score), pct(mm.Model))
}

// checkReadmeOrder fails unless the README's paragraph that links to link
// says exactly these figures, in this order.
func checkReadmeOrder(t *testing.T, link string, want []string) {
	t.Helper()
	paragraph, said := readmeFigures(t, link)
	if strings.Join(said, " ") != strings.Join(want, " ") {
		t.Errorf("%s's paragraph linking %s says %v; the scores, in the order its sentences give them, are %v:\n%s",
			readme, link, said, want, paragraph)
	}
}

// readmeFigures is the README's paragraph of figures that links to link
// (the last paragraph holding link and a percentage), and the figures with
// one decimal it says, in order.
func readmeFigures(t *testing.T, link string) (paragraph string, said []string) {
	t.Helper()
	text, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Split(string(text), "\n\n") {
		if strings.Contains(p, link) && strings.Contains(p, "%") {
			paragraph = p
		}
	}
	return paragraph, regexp.MustCompile(`\d+\.\d%`).FindAllString(paragraph, -1)
}

// checkReadmeFigures fails where the README's paragraph of figures that
// links to (the last paragraph holding link and a percentage) is missing,
// or says a figure with one decimal that figures does not hold.
func checkReadmeFigures(t *testing.T, link, doc string, figures map[string]bool) {
	t.Helper()
	paragraph, said := readmeFigures(t, link)
	if len(said) == 0 {
		t.Errorf("%s has no paragraph of figures linking %s", readme, doc)
	}
	for _, f := range said {
		if !figures[f] {
			t.Errorf("%s says %s, which is no score of %s's tables:\n%s", readme, f, doc, paragraph)
		}
	}
}

func scoresOf(bs []Baseline) []Score {
	var out []Score
	for _, b := range bs {
		out = append(out, b.Score)
	}
	return out
}

// markdownTables are the rows as the doc's two tables: each predictor's
// MAPE with its worst error, the best baseline and whether the model beats
// it; then the model's ranges, the model before and the best in hindsight.
func markdownTables(rows []Row) (scores, ranges string) {
	var s, r strings.Builder
	s.WriteString("| set | protocol | trials | migadvisor")
	for _, b := range rows[0].Baselines {
		s.WriteString(" | " + b.Name)
	}
	s.WriteString(" | best baseline | beats it |\n|" + strings.Repeat("---|", 6+len(rows[0].Baselines)) + "\n")
	r.WriteString("| set | protocol | in its range | mean range width | geometric mean (before) | best in hindsight |\n" +
		"|---|---|---|---|---|---|\n")
	for _, row := range rows {
		fmt.Fprintf(&s, "| %s | %s | %d | %s", row.Set, row.Protocol, row.Model.Trials, markdownScore(row.Model))
		for _, b := range row.Baselines {
			s.WriteString(" | " + markdownScore(b.Score))
		}
		fmt.Fprintf(&s, " | %s | %s |\n", row.BestBaseline, yesNo(row.Standing()))
		fmt.Fprintf(&r, "| %s | %s | %s | %s | %s | %s |\n",
			row.Set, row.Protocol, coverage(row.Model), width(row.Model), mape(row.Before), hindsight(row.Hindsight))
	}
	return s.String(), r.String()
}

// markdownScore is a score's MAPE and worst error, with a minus sign.
func markdownScore(s Score) string {
	return strings.ReplaceAll(withWorst(s), "(-", "(−")
}

// standings say, a line for each row, where the model beats the best
// baseline (wins) and where it does not (losses).
func standings(rows []Row) (wins, losses string) {
	var w, l strings.Builder
	for _, r := range rows {
		best := r.Best()
		switch r.Standing() {
		case "beats":
			fmt.Fprintf(&w, "- %s, %s: the model scores %.1f%%, the best baseline (%s) %.1f%%.\n",
				r.Set, r.Protocol, r.Model.MAPE, best.Name, best.MAPE)
		case "matches":
			fmt.Fprintf(&l, "- %s, %s: %s scores %.1f%%, as the model does.\n", r.Set, r.Protocol, best.Name, best.MAPE)
		default:
			fmt.Fprintf(&l, "- %s, %s: %s scores %.1f%% against the model's %.1f%%.\n", r.Set, r.Protocol, best.Name, best.MAPE, r.Model.MAPE)
		}
	}
	return w.String(), l.String()
}
