package accuracy

import (
	"regexp"
	"strings"
	"testing"
)

// The best baseline is the one of least error; the model beats it only
// where its error is lower as printed, to 0.1%.
func TestTheModelIsJudgedAgainstTheBestBaseline(t *testing.T) {
	row := func(model float64, baselines ...float64) Row {
		r := Row{Set: "lab", Protocol: Overall, Model: Score{Trials: 12, MAPE: model}}
		for i, b := range baselines {
			r.Baselines = append(r.Baselines, Baseline{[]string{"naive 1/SM", "1/√SM", "1/bandwidth"}[i], Score{Trials: 12, MAPE: b}})
		}
		return r
	}
	noTrials := row(10, 20, 15)
	noTrials.Baselines = append(noTrials.Baselines, Baseline{"none", Score{}})
	for _, c := range []struct {
		row            Row
		best, standing string
		verdict        string
	}{
		{row(10, 20, 15, 30), "1/√SM", "beats",
			"lab, all three: migadvisor beats the best baseline, 1/√SM: 10.0% mean error against 15.0%, over 12 trials"},
		{row(20.04, 30, 20.01), "1/√SM", "matches",
			"lab, all three: migadvisor matches the best baseline, 1/√SM: 20.0% mean error against 20.0%, over 12 trials"},
		{row(25, 24, 26, 21.6), "1/bandwidth", "does not beat",
			"lab, all three: migadvisor does not beat the best baseline, 1/bandwidth: 25.0% mean error against 21.6%, over 12 trials"},
		{row(20, 15, 15), "naive 1/SM", "does not beat", ""},
		{noTrials, "1/√SM", "beats", ""},
	} {
		if best := c.row.Best(); best.Name != c.best || c.row.Standing() != c.standing {
			t.Errorf("%+v: best %s, %s; want %s, %s", c.row, best.Name, c.row.Standing(), c.best, c.standing)
		}
		if got := c.row.Verdict(); c.verdict != "" && got != c.verdict {
			t.Errorf("%q, want %q", got, c.verdict)
		}
	}
	var b strings.Builder
	r := row(10, 20, 15)
	r.BestBaseline = r.Best().Name
	err := WriteText(&b, []Row{r})
	lines := strings.Split(b.String(), "\n")
	if err != nil || len(lines) != 5 || !strings.HasPrefix(lines[0], "SET ") || !strings.Contains(lines[0], "  1/√SM  ") ||
		!strings.Contains(lines[1], " 10.0% (+0.0%) ") || !regexp.MustCompile(`  1/√SM +yes  `).MatchString(lines[1]) || lines[3] != r.Verdict() {
		t.Errorf("%v:\n%s", err, b.String())
	}
}
