package savings

import (
	"context"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/history/historytest"
	"github.com/migadvisor/migadvisor/catalog"
)

// An unknown is a next step: carol's jobs, with no GPU memory figure, and
// hank's, which ran to their time limit, are listed to measure on the
// slice that could save them the most, with what it could save (less than
// they spent) and the probe that settles it, hank's with a --time that
// lets a run complete; most SU first; none under min_su_saved.
func TestToMeasureTurnsUnknownsIntoSteps(t *testing.T) {
	s := site(t)
	st := historytest.FromDump(t, s, month())
	recordOOM(t, st, "500")
	rep, err := Build(context.Background(), st, Request{Site: s, Period: november, Thresholds: catalog.Report{MinSUSaved: 1, MinRuns: 2}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Measure{}
	for i, m := range rep.ToMeasure {
		got[m.User] = m
		if i > 0 && m.SUPossible > rep.ToMeasure[i-1].SUPossible {
			t.Errorf("to_measure is not in order of SU possible: %+v", rep.ToMeasure)
		}
		if m.SUPossible <= 0 || m.SUPossible >= m.SUSpent || m.Profile == "full" || m.Jobs != 2 ||
			!strings.Contains(m.Command, "recommend --probe --profiles "+m.Profile) || m.Why == "" {
			t.Errorf("%s: %+v", m.User, m)
		}
	}
	if len(got) != 2 || got["carol"].User == "" || got["hank"].User == "" {
		t.Fatalf("to_measure %+v, want carol's and hank's scripts", rep.ToMeasure)
	}
	if !strings.Contains(got["hank"].Command, "--time ") || !strings.Contains(got["carol"].Why, "memory") {
		t.Errorf("hank's probe asks for no longer --time, or carol's why says nothing of memory: %+v", rep.ToMeasure)
	}
	rep, err = Build(context.Background(), st, Request{Site: s, Period: november, Thresholds: catalog.Report{MinSUSaved: 1e6, MinRuns: 2}})
	if err != nil || len(rep.ToMeasure) != 0 {
		t.Errorf("under min_su_saved: %v %+v", err, rep.ToMeasure)
	}
}
