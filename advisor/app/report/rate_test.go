package report

import (
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
)

// nsPerDayRun is a completed run that reported its work as GROMACS does, a
// rate: nsPerDay simulated ns a day, for elapsed seconds.
func nsPerDayRun(id, profile string, elapsed int64, nsPerDay float64) history.JobRecord {
	r := samplesRun(id, profile, elapsed, nsPerDay, 2150)
	r.WorkUnit = "ns/day"
	return r
}

// rateReport is a workload that reports ns/day: 1g.10gb (3 SU/h) runs
// 100 ns/day for 10000 s, 0.72 SU per simulated ns; the full GPU (17 SU/h)
// 110 ns/day for a shorter 500 s, 3.71 SU per ns. SU ÷ ns/day (0.0833
// against 0.0215) would call the full GPU the cheaper, and the wall times
// (20×) would call it far faster.
func rateReport(t *testing.T) (*Report, []history.JobRecord) {
	t.Helper()
	site, _ := wulverSite(t)
	recs := []history.JobRecord{nsPerDayRun("1", "1g.10gb", 10000, 100), nsPerDayRun("2", "full", 500, 110)}
	rep, err := Build(site, Workload{Tag: "md"}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return rep, recs
}

// A rate is no amount of work: the generic table prices the work done
// (SU per ns, as recommend does), the most SU-efficient profile is the one
// cheapest per ns, and the speed-up compares the rates.
func TestARateIsPricedByTheWorkDone(t *testing.T) {
	rep, _ := rateReport(t)
	rows, err := rep.Table()
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Join(rows[0], ",")
	if !strings.HasSuffix(head, ",Rate (ns/day),SU per ns") {
		t.Errorf("the generic table's header: %s", head)
	}
	if got, want := cell(t, rep, "SU per ns"), catalog.FormatSU(3*24/100.0); got != want {
		t.Errorf("SU per ns on 1g.10gb: %q, want %s (3 SU/h × 24 h ÷ 100 ns)", got, want)
	}
	takeaways, _ := rep.Takeaways()
	text := strings.Join(takeaways, "\n")
	for _, want := range []string{
		"**Most SU-efficient: 1g.10gb**, 0.72 SU per ns against 3.71 on full (5.2× as much).",
		"**Speed-up** (in ns/day): The full GPU ran it 1.1× as fast as 1g.10gb at 5.7× the SU rate.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("takeaways lack %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "per ns/day") {
		t.Errorf("takeaways price a rate:\n%s", text)
	}
}

// The SU per ns is recommend's for the same runs.
func TestARatesSUPerWorkIsRecommends(t *testing.T) {
	rep, recs := rateReport(t)
	var runs []advisor.Run
	for i := range recs {
		if r, ok := advisor.RunFromRecord(&recs[i]); ok {
			runs = append(runs, r)
		}
	}
	rec, err := advisor.Recommend(rep.Site, advisor.Job{Script: "md.sh", Runs: runs}, advisor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := rep.Table()
	for i, row := range rows[1:] {
		pa := profileAdvice(rec, rep.Profiles[i].Profile.Name)
		if pa == nil || pa.SUPerWork == nil {
			t.Fatalf("recommend has no SU per work on %s", row[0])
		}
		if head := rows[0][len(row)-1]; head != "SU per "+pa.WorkUnit {
			t.Errorf("the table's %q, recommend's SU per %s", head, pa.WorkUnit)
		}
		if got, want := row[len(row)-1], catalog.FormatSU(*pa.SUPerWork); got != want {
			t.Errorf("%s: the table's %q, recommend's %s", row[0], got, want)
		}
	}
}

func profileAdvice(rec *advisor.Recommendation, profile string) *advisor.ProfileAdvice {
	for i := range rec.Profiles {
		if rec.Profiles[i].Profile == profile {
			return &rec.Profiles[i]
		}
	}
	return nil
}
