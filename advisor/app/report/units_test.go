package report

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
)

// samplesRun is a completed single-GPU run on profile that trained on work
// samples in elapsed seconds and peaked at peakMiB of GPU memory.
func samplesRun(id, profile string, elapsed int64, work, peakMiB float64) history.JobRecord {
	cpus, mem := int64(1), 4000.0
	end := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	return history.JobRecord{Cluster: "wulver", Key: id, JobID: id, ArrayJob: id, State: "COMPLETED", Profile: profile,
		GPUCount: 1, ElapsedS: &elapsed, CPUs: &cpus, ReqMemMiB: &mem, End: &end,
		Work: &work, WorkUnit: "samples", MonitorPeakMiB: &peakMiB}
}

// samplesReport is a workload that reports its work in samples: 1g.10gb
// (3 SU/h) trains 2.4M samples in 1000 s, 0.833 SU, 3.47e-07 SU a sample;
// the full GPU (17 SU/h) does it in 300 s, 1.42 SU, 5.9e-07 SU a sample.
func samplesReport(t *testing.T) (*Report, []history.JobRecord) {
	t.Helper()
	site, _ := wulverSite(t)
	recs := []history.JobRecord{
		samplesRun("1", "1g.10gb", 1000, 2.4e6, 2150),
		samplesRun("2", "full", 300, 2.4e6, 2150),
	}
	rep, err := Build(site, Workload{Tag: "my-training"}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return rep, recs
}

var eNotation = regexp.MustCompile(`\d[eE][-+]?\d`)

// SU per unit of work reads in a scaled unit (SU per 1M samples, the one
// recommend picks), rounded as recommend rounds SU, in the takeaway and in
// the generic table alike; never 3.47e-07 SU per samples.
func TestSUPerWorkReadsInAScaledUnit(t *testing.T) {
	rep, _ := samplesReport(t)
	takeaways, err := rep.Takeaways()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(takeaways, "\n")
	want := "**Most SU-efficient: 1g.10gb**, 0.347 SU per 1M samples against 0.59 on full (1.7× as much)."
	if !strings.Contains(text, want) {
		t.Errorf("takeaways lack %q:\n%s", want, text)
	}
	rows, err := rep.Table()
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Join(rows[0], ",")
	if !strings.Contains(head, ",SU per 1M samples") {
		t.Errorf("the generic table's header: %s", head)
	}
	if got := cell(t, rep, "SU per 1M samples"); got != "0.347" {
		t.Errorf("SU per 1M samples on 1g.10gb: %q, want 0.347", got)
	}
	if got := cell(t, rep, "SU"); got != catalog.FormatSU(3*1000.0/3600) || got != "0.833" {
		t.Errorf("SU on 1g.10gb: %q, want 0.833 as recommend and history print it", got)
	}
	csv, err := rep.CSV()
	if err != nil {
		t.Fatal(err)
	}
	page, err := rep.Page(PageOptions{Format: FormatMD})
	if err != nil {
		t.Fatal(err)
	}
	for what, s := range map[string]string{"takeaways": text, "CSV": string(csv), "page": page} {
		if eNotation.MatchString(s) {
			t.Errorf("the %s print a figure with an exponent: %q\n%s", what, eNotation.FindString(s), s)
		}
		if strings.Contains(s, "per samples") {
			t.Errorf("the %s say \"per samples\":\n%s", what, s)
		}
	}
}

// The scale follows the figures, as recommend's does: the multiple that
// puts the least at 0.1 or more (SU per sample, singular, when one sample
// costs that much), one scale for the whole table.
func TestSUPerWorkScaleFollowsTheFigures(t *testing.T) {
	site, _ := wulverSite(t)
	for _, c := range []struct {
		work              float64
		unit, small, full string
	}{
		{2.4, "SU per sample", "0.347", "0.59"},
		{24, "SU per 1k samples", "34.7", "59"},
		{2400, "SU per 1k samples", "0.347", "0.59"},
		{2.4e6, "SU per 1M samples", "0.347", "0.59"},
		{2.4e9, "SU per 1G samples", "0.347", "0.59"},
		{2.4e12, "SU per 1G samples", "0.000347", "0.00059"}, // no larger multiple
	} {
		rep, err := Build(site, Workload{Tag: "w"}, []history.JobRecord{
			samplesRun("1", "1g.10gb", 1000, c.work, 2150), samplesRun("2", "full", 300, c.work, 2150)})
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := rep.Table()
		last := len(rows[0]) - 1
		if rows[0][last] != c.unit || rows[1][last] != c.small || rows[2][last] != c.full {
			t.Errorf("work %g: %q, want %s %s / %s", c.work, rows, c.unit, c.small, c.full)
		}
		takeaways, _ := rep.Takeaways()
		if want := "**Most SU-efficient: 1g.10gb**, " + c.small + " " + c.unit + " against " + c.full + " on full"; !strings.Contains(strings.Join(takeaways, "\n"), want) {
			t.Errorf("work %g: takeaways %q, want %q", c.work, takeaways, want)
		}
	}
}

// The scale is the one recommend picks for the same runs.
func TestSUPerWorkScaleIsRecommendsScale(t *testing.T) {
	site, _ := wulverSite(t)
	for _, work := range []float64{2.4, 24, 2400, 2.4e6, 2.4e9} {
		recs := []history.JobRecord{samplesRun("1", "1g.10gb", 1000, work, 2150), samplesRun("2", "full", 300, work, 2150)}
		rep, err := Build(site, Workload{Tag: "w"}, recs)
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := rep.Table()
		var runs []advisor.Run
		for i := range recs {
			if r, ok := advisor.RunFromRecord(&recs[i]); ok {
				runs = append(runs, r)
			}
		}
		rec, err := advisor.Recommend(site, advisor.Job{Script: "train.sh", Runs: runs}, advisor.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, row := range rows[1:] {
			got[row[0]] = row[len(row)-1]
		}
		for _, pa := range rec.Profiles {
			if pa.Profile != "1g.10gb" && pa.Profile != "full" {
				continue
			}
			if pa.SUPerWork == nil {
				t.Fatalf("work %g: recommend has no SU per work on %s", work, pa.Profile)
			}
			if head := rows[0][len(rows[0])-1]; head != "SU per "+pa.WorkUnit {
				t.Errorf("work %g: the table's %q, recommend's SU/%s", work, head, pa.WorkUnit)
			}
			if want := catalog.FormatSU(*pa.SUPerWork); got[pa.Profile] != want {
				t.Errorf("work %g on %s: the table's %q, recommend's %s", work, pa.Profile, got[pa.Profile], want)
			}
		}
	}
}

// Memory reads in GiB, as memory.FormatMiB writes it everywhere else
// (9.5 GiB usable on 1g.10gb), in the takeaway and in the generic table.
func TestMemoryReadsInGiB(t *testing.T) {
	rep, _ := samplesReport(t)
	takeaways, _ := rep.Takeaways()
	want := "**Smallest profile that fits: 1g.10gb**, the smallest measured (peak 2.1 GiB of 9.5 GiB usable)."
	if len(takeaways) == 0 || takeaways[0] != want {
		t.Errorf("takeaways %q\nwant %q", takeaways, want)
	}
	if got := cell(t, rep, "Peak GPU Memory (GiB)"); got != "2.1" {
		t.Errorf("Peak GPU Memory (GiB) %q, want 2.1", got)
	}
	rows, _ := rep.Table()
	if head := strings.Join(rows[0], ","); strings.Contains(head, "(GB)") {
		t.Errorf("the generic table prints memory in GB: %s", head)
	}
}

// A workload with no work unit is compared per run, in SU as recommend
// rounds it: whole SU from 100 on, never an exponent.
func TestSUPerRunIsRoundedAsRecommendRoundsIt(t *testing.T) {
	site, _ := wulverSite(t)
	long := func(id, profile string, elapsed int64) history.JobRecord {
		r := samplesRun(id, profile, elapsed, 0, 2150)
		r.Work, r.WorkUnit = nil, ""
		return r
	}
	rep, err := Build(site, Workload{Tag: "w"}, []history.JobRecord{long("1", "1g.10gb", 1_500_000), long("2", "full", 300_000)})
	if err != nil {
		t.Fatal(err)
	}
	takeaways, _ := rep.Takeaways()
	text := strings.Join(takeaways, "\n")
	// 3 SU/h × 1.5e6 s = 1250 SU; 17 SU/h × 3e5 s = 1416.7 SU.
	if !strings.Contains(text, "**Most SU-efficient: 1g.10gb**, 1250 SU per run against 1417 on full (1.1× as much).") {
		t.Errorf("takeaways:\n%s", text)
	}
	if got := cell(t, rep, "SU"); got != "1250" {
		t.Errorf("SU %q, want 1250", got)
	}
	if eNotation.MatchString(text) {
		t.Errorf("an exponent in %s", text)
	}
}

// A profile where no run completed has no runtime, SU or SU per work in
// the table (seen: a timeout's 68 s read as a measured runtime beside "Figures
// are medians of the completed runs"); its outcome says why.
func TestAProfileWithNoCompletedRunHasNoFigures(t *testing.T) {
	site, _ := wulverSite(t)
	timedOut := samplesRun("1", "1g.10gb", 68, 2.4e6, 2150)
	timedOut.State = "TIMEOUT"
	rep, err := Build(site, Workload{Tag: "w"}, []history.JobRecord{timedOut, samplesRun("2", "full", 300, 2.4e6, 2150)})
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := rep.Table()
	row := map[string]string{}
	for i, name := range rows[0] {
		row[name] = rows[1][i]
	}
	if row["Outcome"] != "timeout" || row["Runtime (s)"] != "" || row["SU"] != "" || row["SU per 1M samples"] != "" {
		t.Errorf("the timed-out profile's row: %v", row)
	}
	// A timeout says nothing about fit (seen: "Smallest profile that fits: 3g.40gb").
	takeaways, _ := rep.Takeaways()
	if want := "**Smallest profile that completed: full**; it did not complete on 1g.10gb (timeout)"; len(takeaways) == 0 || !strings.HasPrefix(takeaways[0], want) {
		t.Errorf("takeaways %q, want the first to start %q", takeaways, want)
	}
}
