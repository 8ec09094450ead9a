package savings

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
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

// A script judged right where it ran is worth measuring where recommend
// itself names the probe: kim's jobs on a whole GPU need 22 GiB and keep
// it busy about half the time, so 3g.40gb fits and is predicted to cost
// about what the whole GPU does, within the spread of the runs; one run
// there tells.
func TestToMeasureNamesTheProbeOfAScriptLeftWhereItRan(t *testing.T) {
	s := site(t)
	var b strings.Builder
	b.WriteString(header)
	for i, sec := range []int{9000, 10000, 11000, 12000} {
		b.WriteString(line(900+i, "kim", "a100", "COMPLETED", fmt.Sprintf("2026-11-1%dT10:00", i), sec, jobstats(22, 80, 48), "seg"))
	}
	st := historytest.FromDump(t, s, b.String())
	rep, err := Build(context.Background(), st, Request{Site: s, Period: november, Thresholds: catalog.Report{MinSUSaved: 1, MinRuns: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Scripts) != 0 {
		t.Errorf("rows %+v, want none: the script is not moved", rep.Scripts)
	}
	if len(rep.ToMeasure) != 1 {
		t.Fatalf("to_measure %+v, want kim's script", rep.ToMeasure)
	}
	m := rep.ToMeasure[0]
	if m.User != "kim" || m.Profile != "3g.40gb" || m.Jobs != 4 || m.SUPossible <= 0 || m.SUPossible >= m.SUSpent ||
		!strings.Contains(m.Command, "--profiles 3g.40gb") || !strings.Contains(m.Why, "within the noise of the runs") || m.Unknown != UnknownRuntime {
		t.Errorf("kim's script to measure: %+v", m)
	}
	// Kim's jobs fit 3g.40gb: her notice says what is unknown, its runtime,
	// not "if it fits".
	n := compose(rep, s, s.Report, "kim", nil)
	addMeasures(&n, s, nil, rep.ToMeasure)
	if !strings.Contains(n.Body, "if it runs there as fast as predicted") || !strings.Contains(n.Body, "if they run there as fast as predicted") ||
		strings.Contains(n.Body, "fits") {
		t.Errorf("kim's notice:\n%s", n.Body)
	}
}

// The slowest a smaller slice could run is no reason to leave it
// unmeasured: lee's solver needs 32 GiB of 3g.40gb's 39.5 (a medium risk)
// and keeps a whole GPU busy 75% of the time, which bounds how much of its
// time could scale with the slice; 3g.40gb is predicted dearer at that
// bound and cheaper at the fast end of its range, so it is listed, with
// both unknowns in its why.
func TestToMeasureListsASmallerSliceTheRangeReaches(t *testing.T) {
	s := site(t)
	var b strings.Builder
	b.WriteString(header)
	for i, sec := range []int{9000, 10000, 11000, 12000} {
		b.WriteString(line(950+i, "lee", "a100", "COMPLETED", fmt.Sprintf("2026-11-1%dT11:00", i), sec, jobstats(32, 80, 75), "solve"))
	}
	st := historytest.FromDump(t, s, b.String())
	rep, err := Build(context.Background(), st, Request{Site: s, Period: november, Thresholds: catalog.Report{MinSUSaved: 1, MinRuns: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.ToMeasure) != 1 {
		t.Fatalf("to_measure %+v, want lee's script", rep.ToMeasure)
	}
	m := rep.ToMeasure[0]
	if m.User != "lee" || m.Profile != "3g.40gb" || m.Jobs != 4 || m.SUPossible <= 0 || m.SUPossible >= m.SUSpent ||
		!strings.Contains(m.Why, "39.5 GiB usable") || !strings.Contains(m.Why, "fast end") || m.Unknown != UnknownBoth {
		t.Errorf("lee's script to measure: %+v", m)
	}
}

// The slice to measure first is the one predicted to save the most, as
// recommend's own probe is of the cheapest: a small slice's wide range
// reaching further down is no reason to pass over the slice predicted to
// cost less. Seen: QLoRA jobs listed for 1g.10gb (4.1× the whole GPU's
// time, at 3 SU an hour) beside 2g.20gb (2.1×, at 5), whose probe truly
// saved more. Where the slice predicted to save cannot reach min_su_saved
// even at its fast end, the one whose range reaches furthest is listed.
func TestToMeasureTriesTheSlicePredictedToSaveTheMost(t *testing.T) {
	s := site(t)
	b := &builder{site: s, th: catalog.Report{MinSUSaved: 1}}
	for _, p := range s.ProfilesBySize() {
		b.order = append(b.order, p.Name)
	}
	secs := func(v float64) *float64 { return &v }
	unsure := func(profile string, ratio, fastEnd float64) advisor.ProfileAdvice {
		return advisor.ProfileAdvice{Profile: profile, Partition: "gpu", OOMRisk: memory.RiskUnknown, RuntimeS: secs(3600 * ratio),
			RuntimeRangeS: &[2]float64{3600 * fastEnd, 3600 * ratio * 1.5}, RuntimeSource: advisor.BasisPredicted}
	}
	full := advisor.ProfileAdvice{Profile: "full", Partition: "gpu", OOMRisk: memory.RiskLow, Eligible: true, RuntimeS: secs(3600), RuntimeSource: advisor.BasisMeasured}
	rec := &advisor.Recommendation{Profiles: []advisor.ProfileAdvice{unsure("1g.10gb", 4.1, 1.2), unsure("2g.20gb", 2.1, 1.6), full}}
	elapsed, cpus, mem := int64(3600), int64(4), 16.0*1024
	r := history.JobRecord{Profile: "full", Partition: "gpu", GPUCount: 1, ElapsedS: &elapsed, CPUs: &cpus, ReqMemMiB: &mem}
	ch, ok := advisor.RecordCharge(s, &r)
	if !ok {
		t.Fatal("the job has no price")
	}
	jobs := []pricedJob{{job: job{rec: &r, su: ch.SU}, base: ch.SU}}
	pa, possible := b.bestUnsure(rec, jobs)
	if pa == nil || pa.Profile != "2g.20gb" || possible <= 0 || possible >= ch.SU {
		t.Errorf("to measure %v, %.3g SU possible of %.3g; want 2g.20gb", pa, possible, ch.SU)
	}
	b.th.MinSUSaved = 1e-9 + possible // 2g.20gb cannot reach it; 1g.10gb's range can
	if pa, _ := b.bestUnsure(rec, jobs); pa == nil || pa.Profile != "1g.10gb" {
		t.Errorf("under min_su_saved on 2g.20gb: %v, want 1g.10gb, whose range reaches further", pa)
	}
}
