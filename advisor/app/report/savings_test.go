package report

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/savings"
	"github.com/migadvisor/migadvisor/catalog"
)

// Names a public page must never carry: the report holds them for the
// admins' own listing and the users' notices.
var privateNames = []string{"alice", "bob", "carol", "train_secret", "oom_job_name", "/home/alice/train.sh",
	"deadbeefcafe", "987654", "123456", "alice_lab"}

func savingsReport() *savings.Report {
	small := savings.Tally{Jobs: 10, SU: 40, OOM: 2, OOMSU: 3.5}
	full := savings.Tally{Jobs: 20, SU: 1200, Smaller: 8, SmallerSU: 800, SmallerSUThere: 150, Saved: 650}
	return &savings.Report{
		Site:       "wulver",
		From:       time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC),
		Until:      time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		User:       "carol",
		Thresholds: savings.Thresholds{MinSUSaved: 10, MinRuns: 2},
		Total: savings.Tally{Jobs: 30, SU: 1240, Smaller: 8, SmallerSU: 800, SmallerSUThere: 150, Saved: 650,
			OOM: 2, OOMSU: 3.5},
		Profiles: []savings.ProfileTally{{Profile: "1g.10gb", Tally: small}, {Profile: "full", Tally: full}},
		Users:    []savings.UserTally{{User: "alice", Scripts: 1, Tally: full}, {User: "bob", Tally: small}},
		Scripts: []savings.Script{{User: "alice", Name: "train_secret", Path: "/home/alice/train.sh", Fingerprint: "deadbeefcafe",
			Jobs: 6, JobIDs: []string{"987654"}, RanOn: []string{"full"}, Recommended: "2g.20gb", SUSpent: 600, SUThere: 100, SUSaved: 500}},
		Below: savings.Below{Scripts: 1, Jobs: 2, SU: 20, SUThere: 7.5, Saved: 12.5},
		OOMs:  []savings.OOMJob{{User: "bob", JobID: "123456", Name: "oom_job_name", Profile: "1g.10gb", SU: 1.75}},
		Unjudged: []savings.Unjudged{
			{Reason: "the runtime on the smaller profile is unknown", Jobs: 3, SU: 45.25},
			{Reason: "recommend could not judge the script", Jobs: 3, SU: 3,
				Examples: []string{`alice train: account "alice_lab" unknown`, "carol sim: partition unknown"}},
		},
	}
}

func builtinWulver(t *testing.T) *catalog.Site {
	t.Helper()
	site, err := catalog.Builtin("wulver")
	if err != nil {
		t.Fatal(err)
	}
	return site
}

var savingsOpt = PageOptions{Format: FormatMD, Generator: "migadvisor test", Generated: generated,
	History: "/home/admin/.local/share/migadvisor/history.db"}

// tableRows reads a page's pipe table back into cells, the separator line
// left out.
func tableRows(page string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(page, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	return rows
}

func TestSavingsPageTable(t *testing.T) {
	page, err := SavingsPage(savingsReport(), builtinWulver(t), savingsOpt)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"Profile", "Jobs", "SU spent", "Jobs a smaller slice would do", "Their SU", "SU on the recommended slice", "SU saved", "Out of memory"},
		{"1g.10gb", "10", "40", "0", "0", "0", "0", "2"},
		{"full", "20", "1200", "8", "800", "150", "650", "0"},
		{"**All**", "**30**", "**1240**", "**8**", "**800**", "**150**", "**650**", "**2**"},
	}
	if got := tableRows(page); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("table rows\n%q\nwant\n%q\npage:\n%s", got, want, page)
	}
}

// largerReport is a month where a larger slice would have cost less for
// some jobs: 1g.10gb's five, which run that much faster on 2g.20gb.
func largerReport() *savings.Report {
	rep := savingsReport()
	small := savings.Tally{Jobs: 10, SU: 40, Larger: 5, LargerSU: 30, LargerSUThere: 25, Saved: 5, OOM: 2, OOMSU: 3.5}
	rep.Profiles[0].Tally = small
	rep.Total.Larger, rep.Total.LargerSU, rep.Total.LargerSUThere, rep.Total.Saved = 5, 30, 25, 655
	return rep
}

// The jobs a larger slice would have cost less for are said and tabled
// beside the smaller slices': the page's figures add up, the headline's
// and each row's.
func TestSavingsPageSaysTheLargerSlices(t *testing.T) {
	page, err := SavingsPage(largerReport(), builtinWulver(t), savingsOpt)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"A smaller MIG slice would have done 8 of them, which spent 800 SU and would have cost 150 SU there. " +
			"A larger MIG slice would have cost less for 5 jobs, which run that much faster there: they spent 30 SU and would have cost 25 SU there. " +
			"In all, 655 SU saved (53% of what the GPU jobs spent).",
		"had 2 jobs a cheaper slice would have done",
		"![GPU SU per profile: spent, and had the jobs moved to a cheaper slice](gpu-savings.svg)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	want := [][]string{
		{"Profile", "Jobs", "SU spent", "Jobs a smaller slice would do", "Their SU", "SU on the smaller slice",
			"Jobs a larger slice would do", "Their SU", "SU on the larger slice", "SU saved", "Out of memory"},
		{"1g.10gb", "10", "40", "0", "0", "0", "5", "30", "25", "5", "2"},
		{"full", "20", "1200", "8", "800", "150", "0", "0", "0", "650", "0"},
		{"**All**", "**30**", "**1240**", "**8**", "**800**", "**150**", "**5**", "**30**", "**25**", "**655**", "**2**"},
	}
	rows := tableRows(page)
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("table rows\n%q\nwant\n%q", rows, want)
	}
	for _, row := range rows[1:] { // what each row saves is what its columns say
		cell := func(i int) float64 { v, _ := strconv.ParseFloat(strings.Trim(row[i], "*"), 64); return v }
		if saved := cell(4) - cell(5) + cell(7) - cell(8); saved != cell(9) {
			t.Errorf("row %q: its columns save %g, its SU saved says %g", row, saved, cell(9))
		}
	}
	svg, _ := SavingsChart(largerReport())
	if !strings.Contains(string(svg), ">SU had the jobs moved to a cheaper slice<") {
		t.Error("the chart's second series is named for the smaller slices alone")
	}
}

func TestSavingsPageSaysTheFigures(t *testing.T) {
	page, _ := SavingsPage(savingsReport(), builtinWulver(t), savingsOpt)
	for _, want := range []string{
		"# Where the GPU service units go\n\n",
		"30 GPU jobs at NJIT Wulver ended in October 2026 (UTC), and spent 1240 SU.",
		"A smaller MIG slice would have done 8 of them, which spent 800 SU and would have cost 150 SU there: 650 SU saved (52% of what the GPU jobs spent).",
		"2 jobs ran out of GPU memory, spending 3.5 SU.",
		"1 script under the site's thresholds (too little saved to tell their users) had 2 jobs a smaller slice would have done, 12.5 SU saved",
		"![GPU SU per profile: spent, and had the smaller-slice jobs moved](gpu-savings.svg)\n",
		"> **Note:** SU are NJIT Wulver's list price", "`SU = (max(CPUs, RAM / 4GiB) + 16 × GPU memory / 80GiB) × hours`",
		"## Not judged\n\n",
		// recommend's refusals merged, their details (an account) dropped.
		"- the runtime on the smaller profile is unknown: 3 jobs, 45.3 SU.\n- recommend could not judge the script: 3 jobs, 3 SU.\n",
		"## Provenance\n\n",
		"judged once the history has 2 runs of it, and listed for its user when a smaller slice would have saved at least 10 SU",
		"- Generated by migadvisor test on 2026-11-21 from history.db.\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
}

// The page's note says what the recommended slice rests on, and what
// each kind of GPU memory figure proves: a peak what the jobs used, an
// out-of-memory error's figure a lower bound, a caching framework's peak
// an upper bound.
func TestSavingsPageSaysWhatFiguresProve(t *testing.T) {
	page, _ := SavingsPage(savingsReport(), builtinWulver(t), savingsOpt)
	for _, want := range []string{"completed there or on a smaller slice", "a measured peak is what the jobs used",
		"out-of-memory error's figure only a lower bound", "(PyTorch) or takes it at its start (JAX, TensorFlow) only an upper bound"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page's note does not say %q:\n%s", want, page)
		}
	}
}

// Docs are often public: the page names no user, job, script or
// fingerprint the report holds, in either format.
func TestSavingsPageNamesNoOne(t *testing.T) {
	for _, format := range []string{FormatMD, FormatMkDocs} {
		opt := savingsOpt
		opt.Format = format
		page, _ := SavingsPage(savingsReport(), builtinWulver(t), opt)
		for _, name := range privateNames {
			if strings.Contains(page, name) {
				t.Errorf("the %s page names %q:\n%s", format, name, page)
			}
		}
	}
}

func TestSavingsPageNoteStyles(t *testing.T) {
	site := builtinWulver(t)
	opt := savingsOpt
	opt.Format = FormatMkDocs
	mk, _ := SavingsPage(savingsReport(), site, opt)
	if !strings.Contains(mk, "!!! note\n    SU are NJIT Wulver's list price") || strings.Contains(mk, "> **Note:**") {
		t.Errorf("the MkDocs page's note:\n%s", mk)
	}
	md, _ := SavingsPage(savingsReport(), site, savingsOpt)
	if !strings.Contains(md, "> **Note:** SU are") || strings.Contains(md, "!!! note") {
		t.Errorf("the plain page's note:\n%s", md)
	}
}

// Sections with nothing to say are left out, and a tiny saving is not
// shown as 0%.
func TestSavingsPageLeavesOutWhatIsNotThere(t *testing.T) {
	rep := savingsReport()
	rep.Unjudged, rep.Below = nil, savings.Below{}
	rep.Total.Saved, rep.Total.SU = 1, 1000
	page, _ := SavingsPage(rep, builtinWulver(t), savingsOpt)
	for _, lack := range []string{"## Not judged", "under the site's thresholds"} {
		if strings.Contains(page, lack) {
			t.Errorf("the page has %q:\n%s", lack, page)
		}
	}
	if !strings.Contains(page, "1 SU saved (under 1% of what the GPU jobs spent)") {
		t.Errorf("the page's share:\n%s", page)
	}
}

func TestEmptySavingsReport(t *testing.T) {
	rep := &savings.Report{Site: "wulver", From: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC),
		Thresholds: savings.Thresholds{MinSUSaved: 10, MinRuns: 2}}
	page, err := SavingsPage(rep, builtinWulver(t), savingsOpt)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, "No GPU job at NJIT Wulver ended since 2026-10-01 (UTC).") ||
		strings.Contains(page, "![") || strings.Contains(page, "| Profile") || !strings.Contains(page, "## Provenance") {
		t.Errorf("the empty page:\n%s", page)
	}
	if _, err := SavingsChart(rep); err == nil {
		t.Error("an empty report drew a chart")
	}
	dir := filepath.Join(t.TempDir(), "admin")
	paths, err := WriteSavings(dir, rep, builtinWulver(t), savingsOpt)
	if err != nil || !slices.Equal(paths, []string{filepath.Join(dir, "gpu-savings.md")}) {
		t.Errorf("wrote %q, %v; want the page alone", paths, err)
	}
}

func TestSavingsChartIsSVGWithBothSeries(t *testing.T) {
	svg, err := SavingsChart(savingsReport())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ XMLName xml.Name }
	if err := xml.Unmarshal(svg, &doc); err != nil || doc.XMLName.Local != "svg" {
		t.Fatalf("not an SVG document: %v", err)
	}
	text := string(svg)
	for _, want := range []string{">GPU SU per profile: spent, and had the smaller-slice jobs moved<", ">1g.10gb<", ">full<", ">SU spent<",
		">SU had the smaller-slice jobs moved<",
		">1200<", ">550<", ">40<"} { // full: 1200 spent, 1200 − 650 needed; 1g.10gb: 40 both
		if !strings.Contains(text, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	for _, name := range privateNames {
		if strings.Contains(text, name) {
			t.Errorf("the chart names %q", name)
		}
	}
	if again, _ := SavingsChart(savingsReport()); string(again) != text {
		t.Error("the same report drew a different chart")
	}
}

func TestWriteSavingsWritesPageAndChart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "docs", "admin") // not there yet
	site := builtinWulver(t)
	paths, err := WriteSavings(dir, savingsReport(), site, savingsOpt)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "gpu-savings.md"), filepath.Join(dir, "gpu-savings.svg")}
	if !slices.Equal(paths, want) {
		t.Fatalf("wrote %q, want %q", paths, want)
	}
	page, _ := SavingsPage(savingsReport(), site, savingsOpt)
	svg, _ := SavingsChart(savingsReport())
	for i, body := range []string{page, string(svg)} {
		got, err := os.ReadFile(want[i])
		if err != nil || string(got) != body {
			t.Errorf("%s: %v, or not what SavingsPage/SavingsChart give", want[i], err)
		}
	}
}
