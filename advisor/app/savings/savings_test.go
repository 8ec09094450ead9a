package savings

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// jobstats is the AdminComment jobstats' epilog writes: base64 of gzip of
// its JSON, the GPU's peak memory in use and, on a whole GPU, utilization.
func jobstats(usedGiB float64, totalGiB, util int) string {
	used, total := int64(usedGiB*(1<<30)), int64(totalGiB)<<30
	js := fmt.Sprintf(`{"gpus":1,"nodes":{"n1":{"cpus":4,"gpu_total_memory":{"0":%d},"gpu_used_memory":{"0":%d}`, total, used)
	if util >= 0 {
		js += fmt.Sprintf(`,"gpu_utilization":{"0":%d}`, util)
	}
	js += `}},"total_time":1800}`
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(js))
	zw.Close()
	return "JS1:" + base64.StdEncoding.EncodeToString(b.Bytes())
}

const header = "JobIDRaw|JobID|Cluster|User|Partition|State|ExitCode|Submit|Start|End|ElapsedRaw|AllocCPUS|ReqMem|AllocTRES|AdminComment|JobName\n"

// line is one job of a dump: ended at end (2026-11-DDTHH:MM), one GPU of
// type gpu, 4 CPUs and 16G, for elapsed seconds.
func line(id int, user, gpu, state, end string, elapsed int, comment, name string) string {
	e, _ := time.ParseInLocation("2006-01-02T15:04", end, time.Local)
	start := e.Add(-time.Duration(elapsed) * time.Second).Format("2006-01-02T15:04:05")
	return fmt.Sprintf("%d|%d|wulver|%s|gpu|%s|0:0|%s|%s|%s|%d|4|16G|cpu=4,gres/gpu:%s=1,gres/gpu=1,mem=16G,node=1|%s|%s\n",
		id, id, user, state, start, start, e.Format("2006-01-02T15:04:05"), elapsed, gpu, comment, name)
}

var november = history.Period{From: time.Date(2026, 11, 1, 0, 0, 0, 0, time.Local), Before: time.Date(2026, 12, 1, 0, 0, 0, 0, time.Local)}

// site is Wulver with its thresholds low enough for a few half-hour jobs.
func site(t *testing.T) *catalog.Site {
	s, err := catalog.Builtin("wulver")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A month of a small cluster: alice's training runs a whole A100 at 3 GiB
// and 10% busy; bob's fills it; carol's have no GPU memory figure; dave
// ran once; erin's ran out of memory on 1g.10gb and fit 2g.20gb; one of
// alice's ended in October.
func month() string {
	var b strings.Builder
	b.WriteString(header)
	for i := 0; i < 3; i++ {
		b.WriteString(line(100+i, "alice", "a100", "COMPLETED", fmt.Sprintf("2026-11-1%dT10:00", i), 3600, jobstats(3, 80, 10), "train"))
	}
	b.WriteString(line(99, "alice", "a100", "COMPLETED", "2026-10-20T10:00", 3600, jobstats(3, 80, 10), "train"))
	for i := 0; i < 2; i++ {
		b.WriteString(line(200+i, "bob", "a100", "COMPLETED", fmt.Sprintf("2026-11-1%dT11:00", i), 3600, jobstats(70, 80, 90), "big"))
		b.WriteString(line(300+i, "carol", "a100", "COMPLETED", fmt.Sprintf("2026-11-1%dT12:00", i), 3600, "", "sim"))
	}
	b.WriteString(line(400, "dave", "a100", "COMPLETED", "2026-11-15T13:00", 3600, jobstats(2, 80, 10), "once"))
	b.WriteString(line(500, "erin", "a100_10g", "FAILED", "2026-11-16T14:00", 600, jobstats(9.4, 10, -1), "llm"))
	b.WriteString(line(501, "erin", "a100_20g", "COMPLETED", "2026-11-17T14:00", 3600, jobstats(12, 20, -1), "llm"))
	b.WriteString(line(502, "erin", "a100_20g", "COMPLETED", "2026-11-18T14:00", 3600, jobstats(12, 20, -1), "llm"))
	// hank's runs all reached their time limit, a longer one the second
	// time (a job that needs more than it asked for, not one that runs for
	// a set time): recommend names no profile.
	b.WriteString(line(600, "hank", "a100", "TIMEOUT", "2026-11-19T15:00", 3600, jobstats(5, 80, 10), "long"))
	b.WriteString(line(601, "hank", "a100", "TIMEOUT", "2026-11-20T15:00", 7200, jobstats(5, 80, 10), "long"))
	// ivy's GPU is not one the site file knows; jack's job never started.
	b.WriteString(line(700, "ivy", "h100", "COMPLETED", "2026-11-21T16:00", 3600, "", "port"))
	b.WriteString(line(800, "jack", "a100", "CANCELLED by 0", "2026-11-21T17:00", 0, "", "never"))
	return b.String()
}

const oomText = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 9.50 GiB of which 1.10 GiB is free.\n"

func recordOOM(t *testing.T, st *history.Store, key string) {
	t.Helper()
	ev, err := slurm.ScanOutput(strings.NewReader(oomText), slurm.ScanOptions{})
	if err != nil || ev.GPUOOM == nil {
		t.Fatalf("scan: %v %+v", err, ev)
	}
	if err := st.RecordOutput(context.Background(), "wulver", key, "/home/erin/slurm-"+key+".out", 100, time.Now(), ev); err != nil {
		t.Fatal(err)
	}
}

// charge is the site's price of a 4-CPU, 16G job on profile for seconds.
func charge(t *testing.T, s *catalog.Site, profile string, seconds float64) float64 {
	t.Helper()
	j, err := s.JobOf(catalog.Usage{Profile: profile, CPUs: 4, MemMiB: 16384, Hours: seconds / 3600})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Charge(j)
	if err != nil {
		t.Fatal(err)
	}
	return c.SU
}

func TestBuildSortsEveryJob(t *testing.T) {
	s := site(t)
	st := historytest.FromDump(t, s, month())
	recordOOM(t, st, "500")
	var calls, last, total int
	progress := func(done, n int) { calls, last, total = calls+1, done, n }
	rep, err := Build(context.Background(), st, Request{Site: s, Period: november, Thresholds: catalog.Report{MinSUSaved: 1, MinRuns: 2},
		Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	// One call per group of a user's script, the last with their count.
	if calls == 0 || last != total || calls != total {
		t.Errorf("progress: %d calls, last %d of %d", calls, last, total)
	}
	// Every job that ended in November, and only those, is counted once.
	if rep.Total.Jobs != 14 {
		t.Errorf("jobs: %d, want 14 (alice's October run and jack's that never started left out)", rep.Total.Jobs)
	}
	full := charge(t, s, "full", 3600)
	if len(rep.Scripts) != 1 {
		t.Fatalf("scripts: %+v", rep.Scripts)
	}
	sc := rep.Scripts[0]
	if sc.User != "alice" || sc.Name != "train" || sc.Jobs != 3 || sc.Fingerprint != "" || strings.Join(sc.RanOn, ",") != "full" {
		t.Errorf("alice's script: %+v", sc)
	}
	if sc.Recommended == "full" || sc.Recommended == "" || sc.MeasuredBy != memory.MeasuredByJobstats {
		t.Errorf("recommended %q, measured by %q", sc.Recommended, sc.MeasuredBy)
	}
	// What it would have cost is the same jobs on the recommended slice for
	// the runtime the model predicts there.
	there := charge(t, s, sc.Recommended, 3600*sc.RuntimeRatio)
	if math.Abs(sc.SUSpent-3*full) > 0.01 || math.Abs(sc.SUThere-3*there) > 0.05*3*there || sc.SUSaved <= 0 ||
		math.Abs(sc.SUSaved-(sc.SUSpent-sc.SUThere)) > 0.01 {
		t.Errorf("SU: spent %g (want %g), there %g (want about %g), saved %g", sc.SUSpent, 3*full, sc.SUThere, 3*there, sc.SUSaved)
	}
	if p := profileTally(rep, "full"); p.Jobs != 10 || p.Smaller != 3 || p.Saved != sc.SUSaved {
		t.Errorf("full: %+v", p)
	}
	jobs := 0
	for _, p := range rep.Profiles {
		jobs += p.Jobs
	}
	if jobs != rep.Total.Jobs || profileTally(rep, UnknownProfile).Jobs != 1 {
		t.Errorf("the profile rows hold %d jobs of %d: %+v", jobs, rep.Total.Jobs, rep.Profiles)
	}
	if rep.Total.Saved != sc.SUSaved || rep.Total.Smaller != 3 {
		t.Errorf("total: %+v", rep.Total)
	}
	// Erin's OOM on 1g.10gb is listed with the slice her script fits.
	if len(rep.OOMs) != 1 || rep.OOMs[0].JobID != "500" || rep.OOMs[0].Profile != "1g.10gb" || rep.OOMs[0].Fits != "2g.20gb" {
		t.Errorf("OOMs: %+v", rep.OOMs)
	}
	if p := profileTally(rep, "1g.10gb"); p.OOM != 1 || p.OOMSU != charge(t, s, "1g.10gb", 600) {
		t.Errorf("1g.10gb: %+v", p)
	}
	// Carol's runs have no memory figure; dave's script ran once; hank's
	// reached their time limits; ivy's GPU is unknown.
	timedOut := noProfile + " (runs that reached their time limit)"
	want := map[string]int{noMemory: 2, fewRuns(2): 1, timedOut: 2, "GPU type h100 is not a profile of the site file": 1}
	for _, u := range rep.Unjudged {
		if want[u.Reason] != u.Jobs {
			t.Errorf("unjudged %q: %d jobs", u.Reason, u.Jobs)
		}
		if u.Reason == timedOut && (len(u.Examples) != 1 || !strings.HasPrefix(u.Examples[0], "hank long: ")) {
			t.Errorf("no profile: examples %q", u.Examples)
		}
		delete(want, u.Reason)
	}
	if len(want) > 0 {
		t.Errorf("not unjudged: %v (got %+v)", want, rep.Unjudged)
	}
	// Bob's fill the GPU: right-sized, in no list.
	for _, u := range rep.Users {
		if u.User == "bob" && (u.Jobs != 2 || u.Smaller != 0 || u.Scripts != 0) {
			t.Errorf("bob: %+v", u)
		}
	}
}

func profileTally(rep *Report, name string) Tally {
	for _, p := range rep.Profiles {
		if p.Profile == name {
			return p.Tally
		}
	}
	return Tally{}
}

// A script whose saving is under min_su_saved is not listed, but its jobs
// and saving stay in the totals; --user keeps one user's jobs.
func TestThresholdsAndUser(t *testing.T) {
	s := site(t)
	st := historytest.FromDump(t, s, month())
	rep, err := Build(context.Background(), st, Request{Site: s, Period: november, Thresholds: catalog.Report{MinSUSaved: 1e6, MinRuns: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Scripts) != 0 || rep.Below.Scripts != 1 || rep.Below.Jobs != 3 || rep.Total.Saved != rep.Below.Saved || rep.Total.Saved <= 0 {
		t.Errorf("below: scripts %d, below %d %+v, total %+v", len(rep.Scripts), rep.Below.Scripts, rep.Below, rep.Total)
	}
	rep, err = Build(context.Background(), st, Request{Site: s, Period: november, User: "bob", Thresholds: catalog.Report{MinSUSaved: 1, MinRuns: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total.Jobs != 2 || len(rep.Users) != 1 || rep.Users[0].User != "bob" || len(rep.Scripts) != 0 {
		t.Errorf("bob alone: %+v", rep)
	}
	// min_runs 1: dave's single run is judged too.
	rep, err = Build(context.Background(), st, Request{Site: s, Period: november, Thresholds: catalog.Report{MinSUSaved: 1, MinRuns: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Scripts) != 2 {
		t.Errorf("min_runs 1: %+v", rep.Scripts)
	}
}

// A script linked to its fingerprint is judged on every run the history
// has of it, by anyone, at any time: one run in the period is enough when
// earlier ones give the evidence.
func TestLinkedScriptUsesEveryRun(t *testing.T) {
	s := site(t)
	dump := header + line(600, "frank", "a100", "COMPLETED", "2026-10-02T10:00", 3600, jobstats(3, 80, 10), "fit") +
		line(601, "grace", "a100", "COMPLETED", "2026-10-03T10:00", 3600, jobstats(3, 80, 10), "fit") +
		line(602, "frank", "a100", "COMPLETED", "2026-11-04T10:00", 3600, jobstats(3, 80, 10), "fit")
	st := historytest.FromDump(t, s, dump)
	var subs []history.Submission
	for _, id := range []string{"600", "601", "602"} {
		subs = append(subs, history.Submission{Cluster: "wulver", JobID: id, Fingerprint: "f1e2d3c4b5a69788", Source: "/home/frank/fit.sh",
			Script: "/home/frank/fit.sh", Submitted: time.Now()})
	}
	if err := st.RecordSubmissions(context.Background(), subs); err != nil {
		t.Fatal(err)
	}
	rep, err := Build(context.Background(), st, Request{Site: s, Period: november, Thresholds: catalog.Report{MinSUSaved: 1, MinRuns: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Scripts) != 1 || rep.Scripts[0].Jobs != 1 || rep.Scripts[0].Runs != 3 || rep.Scripts[0].Path != "/home/frank/fit.sh" {
		t.Fatalf("scripts: %+v (unjudged %+v)", rep.Scripts, rep.Unjudged)
	}
}

// A script whose earlier jobs have no script linked (slurmdbd stores
// scripts from the day AccountingStoreFlags=job_script was set) is one
// row, judged on the runs of both: frank's "fit" jobs, linked or not. Where
// two of a user's scripts bear the name (gina's "sim"), which one her
// unlinked jobs ran is unknown: they stay a row of their own, by name.
func TestScriptAdoptsItsUnlinkedJobsOfOneName(t *testing.T) {
	s := site(t)
	dump := header + line(700, "frank", "a100", "COMPLETED", "2026-10-20T10:00", 3600, jobstats(3, 80, 10), "fit")
	for i, id := range []int{701, 702, 703, 704} {
		dump += line(id, "frank", "a100", "COMPLETED", fmt.Sprintf("2026-11-1%dT10:00", i), 3600, jobstats(3, 80, 10), "fit")
	}
	for i, id := range []int{800, 801, 802, 803} {
		dump += line(id, "gina", "a100", "COMPLETED", fmt.Sprintf("2026-11-1%dT11:00", i), 3600, jobstats(3, 80, 10), "sim")
	}
	st := historytest.FromDump(t, s, dump)
	var subs []history.Submission
	for id, fp := range map[string]string{"703": "f1f1f1f1f1f1f1f1", "704": "f1f1f1f1f1f1f1f1", "802": "a2a2a2a2a2a2a2a2", "803": "b3b3b3b3b3b3b3b3"} {
		source := "sacct:wulver/" + id
		subs = append(subs, history.Submission{Cluster: "wulver", JobID: id, Fingerprint: fp, Source: source, Script: source, Submitted: time.Now()})
	}
	if err := st.RecordSubmissions(context.Background(), subs); err != nil {
		t.Fatal(err)
	}
	rep, err := Build(context.Background(), st, Request{Site: s, Period: november, Thresholds: catalog.Report{MinSUSaved: 1, MinRuns: 2}})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]Script{}
	for _, sc := range rep.Scripts {
		rows[sc.User] = append(rows[sc.User], sc)
	}
	if f := rows["frank"]; len(f) != 1 || f[0].Fingerprint != "f1f1f1f1f1f1f1f1" || f[0].Jobs != 4 || f[0].Runs != 5 {
		t.Errorf("frank's fit.sh, linked from its third job on: %+v, want one row of its 4 jobs on its 5 runs", f)
	}
	byName := 0
	for _, sc := range rows["gina"] {
		if sc.Fingerprint == "" {
			byName += sc.Jobs
		}
	}
	if byName != 2 {
		t.Errorf("gina's unlinked sim jobs, with two scripts of that name: %+v, want 2 jobs by name", rows["gina"])
	}
}

// Jobs not linked to a script are judged on every job of the same user,
// name and resources in the history, not the period's alone.
func TestNamedJobsUseEveryRun(t *testing.T) {
	s := site(t)
	st := historytest.FromDump(t, s, month())
	one := history.Period{From: time.Date(2026, 11, 12, 0, 0, 0, 0, time.Local), Before: time.Date(2026, 11, 13, 0, 0, 0, 0, time.Local)}
	rep, err := Build(context.Background(), st, Request{Site: s, Period: one, User: "alice", Thresholds: catalog.Report{MinSUSaved: 1, MinRuns: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Scripts) != 1 || rep.Scripts[0].Jobs != 1 || rep.Scripts[0].Runs != 4 {
		t.Errorf("scripts %+v, unjudged %+v", rep.Scripts, rep.Unjudged)
	}
}

// No job in the period is an empty report, not an error; its JSON has
// its lists empty, not null, and so has what Notify did with it.
func TestEmptyPeriod(t *testing.T) {
	s := site(t)
	st := historytest.FromDump(t, s, month())
	rep, err := Build(context.Background(), st, Request{Site: s, Period: history.Period{Before: november.From.AddDate(0, -2, 0)}})
	if err != nil || rep.Total.Jobs != 0 || len(rep.Scripts) != 0 || len(rep.Profiles) != 0 {
		t.Fatalf("%v %+v", err, rep)
	}
	data, _ := json.Marshal(rep)
	for _, list := range []string{"profiles", "users", "scripts", "out_of_memory", "to_measure", "unjudged"} {
		if !strings.Contains(string(data), `"`+list+`":[]`) {
			t.Errorf("%s is not an empty list: %s", list, data)
		}
	}
	res, err := Notify(context.Background(), NotifyRequest{Report: rep, Site: s, Ledger: filepath.Join(t.TempDir(), "notices.json"),
		Sender: DirSender{Dir: t.TempDir()}, DryRun: true, Now: november.Before})
	if data, _ := json.Marshal(res); err != nil || !strings.Contains(string(data), `"notices":[]`) {
		t.Errorf("%v %s", err, data)
	}
}

func TestCSVKeepsFormulasOut(t *testing.T) {
	rep := &Report{Scripts: []Script{{User: "alice", Name: "=HYPERLINK(\"x\")", Jobs: 2, RanOn: []string{"full"}, Recommended: "1g.10gb",
		SUSpent: 20, SUThere: 6, SUSaved: 14, JobIDs: []string{"1", "2"}}}}
	var b bytes.Buffer
	if err := rep.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || lines[0] != strings.Join(CSVHeader, ",") {
		t.Fatalf("%q", lines)
	}
	if !strings.HasPrefix(lines[1], `alice,"'=HYPERLINK(""x"")"`) || !strings.Contains(lines[1], ",20,6,14,1 2") {
		t.Errorf("row: %s", lines[1])
	}
}

func TestPeriodInWords(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, cet) }
	for _, c := range []struct {
		from, until time.Time
		want        string
	}{
		{day(2026, 11, 1), day(2026, 12, 1), "in November 2026 (CET)"},
		{day(2026, 12, 1), day(2027, 1, 1), "in December 2026 (CET)"},
		{day(2026, 11, 1), day(2026, 11, 15), "from 2026-11-01 to 2026-11-14 (CET)"},
		{day(2026, 11, 1), time.Time{}, "since 2026-11-01 (CET)"},
		{time.Time{}, day(2026, 11, 15), "up to and including 2026-11-14 (CET)"},
		{day(2026, 11, 1).Add(8 * time.Hour), day(2026, 11, 2).Add(90 * time.Minute), "from 2026-11-01 08:00 to 2026-11-02 01:30 (CET)"},
		{time.Time{}, time.Time{}, "at any time"},
	} {
		if got := (&Report{From: c.from, Until: c.until}).Period(); got != c.want {
			t.Errorf("%v–%v: %q, want %q", c.from, c.until, got, c.want)
		}
	}
}

// A script measured on one profile is judged with the peers recommend
// would read, asked for by its fingerprint (none, for a group of a job
// name): the report and recommend agree.
func TestBuildAsksForPeers(t *testing.T) {
	s := site(t)
	st := historytest.FromDump(t, s, month())
	var asked []string
	peers := func(fp string) []runmodel.Peer {
		asked = append(asked, fp)
		return []runmodel.Peer{{"1g.10gb": 771, "full": 100}}
	}
	if _, err := Build(context.Background(), st, Request{Site: s, Period: november, Thresholds: catalog.Report{MinSUSaved: 1, MinRuns: 2},
		Peers: peers}); err != nil {
		t.Fatal(err)
	}
	if len(asked) == 0 || slices.ContainsFunc(asked, func(fp string) bool { return fp != "" }) {
		t.Errorf("peers asked for %q: want the name groups' (\"\")", asked)
	}
}

// A row of a script its user probed names the file they ran and the name
// their jobs bear, not the newest job's, a probe's variant (its file in
// the probe's directory, its name mytrain-full), which is not listed.
func TestRowIsTheScriptItsUserRan(t *testing.T) {
	s := site(t)
	var dump strings.Builder
	dump.WriteString(header)
	for i := range 3 {
		dump.WriteString(line(101+i, "alice", "a100", "COMPLETED", fmt.Sprintf("2026-11-0%dT10:00", 2+i), 3600, jobstats(3, 80, 10), "mytrain"))
	}
	dump.WriteString(line(104, "alice", "a100_10g", "COMPLETED", "2026-11-06T10:00", 3600, jobstats(3, 10, -1), "mytrain-1g.10gb"))
	dump.WriteString(line(105, "alice", "a100", "COMPLETED", "2026-11-06T11:00", 3600, jobstats(3, 80, 10), "mytrain-full"))
	st := historytest.FromDump(t, s, dump.String())
	var subs []history.Submission
	for id, script := range map[string]string{"101": "", "102": "", "103": "", "104": "/home/alice/probe/1g.10gb.sh", "105": "/home/alice/probe/full.sh"} {
		sub := history.Submission{Cluster: "wulver", JobID: id, Fingerprint: "a1b2c3d4e5f60718", Source: "/home/alice/mytrain.sh",
			Script: "/home/alice/mytrain.sh", Submitted: time.Now()}
		if script != "" {
			sub.Script, sub.SweepDir = script, "/home/alice/probe"
		}
		subs = append(subs, sub)
	}
	if err := st.RecordSubmissions(context.Background(), subs); err != nil {
		t.Fatal(err)
	}
	rep, err := Build(context.Background(), st, Request{Site: s, Period: november, Thresholds: catalog.Report{MinSUSaved: 1, MinRuns: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Scripts) != 1 || rep.Scripts[0].Path != "/home/alice/mytrain.sh" || rep.Scripts[0].Name != "mytrain" || rep.Scripts[0].Jobs != 3 {
		t.Fatalf("scripts: %+v (unjudged %+v)", rep.Scripts, rep.Unjudged)
	}
	body := compose(rep, s, s.Report.WithDefaults(), "alice", rep.Scripts).Body
	if !strings.Contains(body, "- /home/alice/mytrain.sh (jobs named “mytrain”): 3 jobs on full;") ||
		!strings.Contains(body, "migadvisor recommend /home/alice/mytrain.sh\n") || strings.Contains(body, "probe") {
		t.Errorf("the notice:\n%s", body)
	}
}

// A script whose every run ran until one time limit stopped it is judged
// per unit of work: listed on the slice where the same work costs less,
// its SU there the same work's, and the row says so. Its runs were an
// unjudged "no profile" before: work done in a fixed time is no runtime.
func TestATimeBudgetedScriptIsListedPerUnitOfWork(t *testing.T) {
	s := site(t)
	var b strings.Builder
	b.WriteString(header)
	for i := 0; i < 3; i++ {
		b.WriteString(line(950+i, "lea", "a100", "TIMEOUT", fmt.Sprintf("2026-11-1%dT10:00", i), 14400, jobstats(3, 80, 25), "search"))
	}
	st := historytest.FromDump(t, s, b.String())
	rep, err := Build(context.Background(), st, Request{Site: s, Period: november, Thresholds: catalog.Report{MinSUSaved: 1, MinRuns: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Scripts) != 1 {
		t.Fatalf("scripts %+v, unjudged %+v", rep.Scripts, rep.Unjudged)
	}
	sc := rep.Scripts[0]
	if sc.Recommended == "full" || sc.TimeBudgetS != 14400 || sc.RuntimeRatio <= 1 || !strings.Contains(sc.Why, "time limit") {
		t.Fatalf("lea's script: %+v", sc)
	}
	there := charge(t, s, sc.Recommended, 14400*sc.RuntimeRatio)
	if math.Abs(sc.SUThere-3*there) > 0.05*3*there || sc.SUSaved <= 0 {
		t.Errorf("SU there %g, want about %g for the same work (3 × %g)", sc.SUThere, 3*there, there)
	}
	// The notice lea gets says the same: no "a run took 4 hours, expect
	// 7" as if the runs had finished.
	n := compose(rep, s, s.Report, "lea", rep.Scripts)
	if !strings.Contains(n.Body, "ran until its time limit stopped it") || !strings.Contains(n.Body, "for the same work") ||
		strings.Contains(n.Body, "a run took about") {
		t.Errorf("lea's notice:\n%s", n.Body)
	}
	// The --time it is told to ask for is what a run there costs, so it is
	// the same work's time, not the slow end of its range. Seen: "a time
	// limit that covers the slowest of that: --time=1-12:40:00" for work
	// predicted to take 07:14.
	limit, err := slurm.ParseTimeLimit(sc.TimeLimit)
	if err != nil || limit.Duration.Seconds() > 14400*sc.RuntimeRatio+300 || limit.Duration.Seconds() < 14400*sc.RuntimeRatio {
		t.Errorf("--time %q for work predicted at %.0f s (%v)", sc.TimeLimit, 14400*sc.RuntimeRatio, err)
	}
	if !strings.Contains(n.Body, "--time="+sc.TimeLimit+" (a run goes on to its limit") || strings.Contains(n.Body, "covers the slowest") {
		t.Errorf("lea's notice on the time limit:\n%s", n.Body)
	}
}

// Read a group at a time, or two jobs' rows at a time, the period gives the
// report it gives read in one batch, and tells a plan of the same jobs, as
// judged, in the same order.
func TestBuildReadsInBatchesAsInOne(t *testing.T) {
	s := site(t)
	st := historytest.FromDump(t, s, month())
	recordOOM(t, st, "500")
	w := buildAgreeWorld(t, agreeCases())
	defer func(n int) { batchRows = n }(batchRows)
	for _, c := range []struct {
		st  *history.Store
		req Request
	}{{st, Request{Site: s, Period: november, Thresholds: catalog.Report{MinSUSaved: 1, MinRuns: 2}}},
		{w.st, Request{Site: w.site, Thresholds: w.site.Report.WithDefaults()}}} {
		var reports []*Report
		var told [][]string
		for _, n := range []int{1 << 30, 2, 1} {
			batchRows = n
			var heard []string
			c.req.Judged = func(j Judged) {
				heard = append(heard, fmt.Sprintf("%s %s %s %.3f %q", j.Record.JobID, j.Record.Profile, j.MovedTo, j.Ratio, j.Unjudged))
			}
			rep, err := Build(context.Background(), c.st, c.req)
			if err != nil {
				t.Fatal(err)
			}
			reports, told = append(reports, rep), append(told, heard)
		}
		for i := 1; i < len(reports); i++ {
			if !reflect.DeepEqual(reports[i], reports[0]) {
				t.Errorf("batches %d: the report differs from one batch's", i)
			}
			if !slices.Equal(told[i], told[0]) {
				t.Errorf("batches %d: told %v, want %v", i, told[i], told[0])
			}
		}
		if len(told[0]) == 0 {
			t.Error("no job judged")
		}
	}
}
