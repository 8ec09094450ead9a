package savings

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// textReport is a small report: two scripts listed (one by its file, one
// by its job name), one below the thresholds, an out-of-memory job, jobs
// not judged, a user whose jobs a larger slice would have cost less for
// and one whose jobs stay where they ran.
func textReport() *Report {
	nov := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	total := Tally{Jobs: 6, SU: 100, Smaller: 4, SmallerSU: 80, SmallerSUThere: 30, Saved: 50, OOM: 1, OOMSU: 2}
	return &Report{Site: "wulver", From: nov, Until: nov.AddDate(0, 1, 0), Thresholds: Thresholds{MinSUSaved: 10, MinRuns: 2},
		Total: total,
		Profiles: []ProfileTally{{"1g.10gb", Tally{Jobs: 2, SU: 20, OOM: 1, OOMSU: 2}},
			{"full", Tally{Jobs: 4, SU: 80, Smaller: 4, SmallerSU: 80, SmallerSUThere: 30, Saved: 50}}},
		Users: []UserTally{{"alice", 1, Tally{Jobs: 3, SU: 60, Smaller: 2, SmallerSU: 60, SmallerSUThere: 20, Saved: 40}},
			{"bob", 0, Tally{Jobs: 1, SU: 5}}, {"carol", 1, Tally{Jobs: 2, SU: 35, Smaller: 2, SmallerSU: 20, SmallerSUThere: 10, Saved: 10, OOM: 1}},
			{"erin", 0, Tally{Jobs: 1, SU: 10, Larger: 1, LargerSU: 10, LargerSUThere: 8, Saved: 2}}},
		Scripts: []Script{
			{User: "alice", Name: "train", Path: "/home/alice/train.sh", Fingerprint: "0123456789abcdef", Jobs: 2, RanOn: []string{"full"},
				Recommended: "2g.20gb", SUSpent: 60, SUThere: 20, SUSaved: 40, Why: "needs 3.8 GiB"},
			{User: "carol", Name: "fit", Path: "sacct:wulver/7", Jobs: 2, RanOn: []string{"1g.10gb", "full"}, Recommended: "1g.10gb",
				SUSpent: 20, SUThere: 10, SUSaved: 10, Why: "completed on 1g.10gb"},
		},
		Below: Below{Scripts: 1, Jobs: 1, Saved: 0.5},
		OOMs: []OOMJob{{User: "carol", JobID: "42", Name: "fit", Profile: "1g.10gb", SU: 2},
			{User: "dan", JobID: "43", Name: "x", Profile: "1g.10gb", SU: 1, Fits: "2g.20gb"}},
		Unjudged: []Unjudged{{Reason: "one run", Jobs: 1, SU: 3, Examples: []string{"bob solo: 1 run"}}},
	}
}

func TestReportWriteText(t *testing.T) {
	const want = `GPU jobs that ended in November 2026 (UTC), site wulver, from /site/history.db: 6 jobs, 100 SU
a smaller slice would have done 4 of them: 80 SU spent, about 30 SU there; saves about 50 SU (50% of what the GPU jobs spent)
ran out of GPU memory: 1 job, 2 SU

USER   SCRIPT               JOBS  RAN ON        USE      SU SPENT  SU THERE  SAVED  WHY
alice  train.sh (01234567)  2     full          2g.20gb  60        20        40     needs 3.8 GiB
carol  fit (by name)        2     1g.10gb,full  1g.10gb  20        10        10     completed on 1g.10gb
not listed: 1 script saving under 10 SU each (min_su_saved): 1 job, 0.5 SU saved, counted in the totals

RAN ON   JOBS  SU   MOVED  THEIR SU  SU THERE  SAVED  OOM
1g.10gb  2     20   0      0         0         0      1
full     4     80   4      80        30        50     0
all      6     100  4      80        30        50     1

USER   JOBS  SU  MOVED  THEIR SU  SU THERE  SAVED  OOM  SCRIPTS LISTED
alice  3     60  2      60        20        40     0    1
carol  2     35  2      20        10        10     1    1
erin   1     10  1      10        8         2      0    0
not shown: 1 user with 1 job (5 SU), none that another slice would have done for less or that ran out of GPU memory

ran out of GPU memory:
USER   JOB  NAME  PROFILE  SU  FITS ON
carol  42   fit   1g.10gb  2   -
dan    43   x     1g.10gb  1   2g.20gb

not judged:
  1 job (3 SU): one run
    bob solo: 1 run
`
	var b strings.Builder
	textReport().WriteText(&b, "/site/history.db")
	if b.String() != want {
		t.Errorf("WriteText:\n%s\nwant:\n%s", b.String(), want)
	}
}

// A report with no job says so, whoever's it is, and still says what was
// not judged.
func TestReportWriteTextEmpty(t *testing.T) {
	cases := []struct{ user, want string }{
		{"", "GPU jobs that ended at any time, site wulver, from h.db: 0 jobs, 0 SU\n" +
			"nothing to judge: no GPU job ended in the period in this history (a site history is filled by 'collect --all-users')\n"},
		{"bob", "GPU jobs of bob that ended at any time, site wulver, from h.db: 0 jobs, 0 SU\n" +
			"nothing to judge: no GPU job of bob ended in the period in this history\n"},
	}
	for _, c := range cases {
		var b strings.Builder
		(&Report{Site: "wulver", User: c.user}).WriteText(&b, "h.db")
		if b.String() != c.want {
			t.Errorf("user %q:\n%s\nwant:\n%s", c.user, b.String(), c.want)
		}
	}
	var b strings.Builder
	(&Report{Site: "wulver", Unjudged: []Unjudged{{Reason: "no profile", Jobs: 2, SU: 4}}}).WriteText(&b, "h.db")
	if !strings.HasSuffix(b.String(), "\nnot judged:\n  2 jobs (4 SU): no profile\n") {
		t.Errorf("the unjudged jobs of an empty report are not said:\n%s", b.String())
	}
}

func TestNotifyResultWriteText(t *testing.T) {
	sent := Notice{User: "alice", To: "mail alice", Subject: "GPU", Body: "hello\n"}
	failed := Notice{User: "bob", To: "mail bob", Err: "exit 1"}
	cases := []struct {
		name          string
		res           NotifyResult
		dryRun, files bool
		want          string
	}{
		{"nothing listed", NotifyResult{Unset: []string{"no notify_command"}}, false, false,
			"\nno notice to send: no script is listed\nnot configured yet: no notify_command\n"},
		{"sent", NotifyResult{Notices: []Notice{sent, failed}, Told: 1}, false, false,
			"\nsent to alice: mail alice\nnot sent to bob: exit 1\n1 script left out (listed or worth measuring): its user was told of it within notify_every_days\n"},
		{"files", NotifyResult{Notices: []Notice{sent}, Told: 2}, false, true,
			"\nwrote the notice for alice: mail alice\n2 scripts left out (listed or worth measuring): their users were told of them within notify_every_days\n"},
		{"dry run", NotifyResult{Notices: []Notice{sent, failed}}, true, false,
			"\nwould send to alice: mail alice\n--- Subject: GPU\nhello\n---\nwould not send to bob: exit 1\n"},
		{"all told", NotifyResult{Told: 1}, false, false, "\n1 script left out (listed or worth measuring): its user was told of it within notify_every_days\n"},
	}
	for _, c := range cases {
		var b strings.Builder
		c.res.WriteText(&b, c.dryRun, c.files)
		if b.String() != c.want {
			t.Errorf("%s:\n%q\nwant\n%q", c.name, b.String(), c.want)
		}
	}
}

// An empty report says why, from what the history holds, and what fills it.
func TestEmptyReportSaysWhy(t *testing.T) {
	from := time.Date(2026, 10, 1, 0, 0, 0, 0, time.Local)
	first, last := time.Date(2026, 11, 24, 9, 0, 0, 0, time.Local), time.Date(2026, 11, 30, 18, 0, 0, 0, time.Local)
	fill := "migadvisor collect --all-users --since 2026-10-01 (a collect with no --since reads the last 7 days, and then goes on from where it left off)\n"
	for _, c := range []struct {
		held *history.Held
		user string
		want string
	}{
		{&history.Held{}, "", "nothing to judge: this history holds no job yet; to read the period's accounting into it: " + fill},
		{&history.Held{NoEnd: 126}, "", "nothing to judge: none of the 126 jobs this history holds has an end (not ended yet, " +
			"or read from a dump without End), and a job is judged in the period it ended; to read the period's accounting into it: " + fill},
		{&history.Held{Jobs: 40, First: &first, Last: &last}, "",
			"nothing to judge: no job ended in the period in this history, whose 40 jobs ended from 2026-11-24 to 2026-11-30; " +
				"to read the period's accounting into it: " + fill},
		{&history.Held{Jobs: 40, First: &first, Last: &last, InPeriod: 3}, "", "nothing to judge: 3 jobs ended in the period in this history, none on a GPU\n"},
		{&history.Held{Jobs: 40, First: &first, Last: &last}, "alice", "nothing to judge: no GPU job of alice ended in the period in this history\n"},
	} {
		rep := &Report{Site: "wulver", From: from, Until: from.AddDate(0, 1, 0), User: c.user, Held: c.held}
		var b strings.Builder
		rep.WriteText(&b, "site.db")
		if _, got, _ := strings.Cut(b.String(), "\n"); got != c.want {
			t.Errorf("%+v:\n%q\nwant\n%q", c.held, got, c.want)
		}
	}
}

// The scripts an unjudged reason names are cut to MaxExamples, and the
// report says how many it leaves out, in its text and its JSON: five
// scripts of two jobs each are three named and two more.
func TestUnjudgedSaysTheExamplesLeftOut(t *testing.T) {
	b := &builder{rep: &Report{Site: "wulver"}, unjudged: map[string]*Unjudged{}, examples: map[string]map[string]bool{}}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		for range 2 {
			b.skip("a ceiling", job{su: 1}, "alice "+name+": too close")
		}
	}
	b.finish()
	u := b.rep.Unjudged[0]
	if u.Jobs != 10 || len(u.Examples) != MaxExamples || u.ExamplesLeftOut != 2 {
		t.Fatalf("%+v", u)
	}
	var text strings.Builder
	b.rep.WriteText(&text, "h.db")
	if !strings.HasSuffix(text.String(), "    alice c: too close\n    and 2 more scripts\n") {
		t.Errorf("the text does not say the examples left out:\n%s", text.String())
	}
	data, _ := json.Marshal(u)
	if !strings.Contains(string(data), `"examples_left_out":2`) {
		t.Errorf("the JSON does not count the examples left out: %s", data)
	}
}
