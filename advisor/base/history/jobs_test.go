package history

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

var profiles = map[string]string{"a100_10g": "1g.10gb", "a100_20g": "2g.20gb", "a100_40g": "3g.40gb", "a100": "full"}

func testOptions() ImportOptions {
	return ImportOptions{Cluster: "dump", Profile: func(t string, n int) string { return profiles[t] }, BatchSize: 4}
}

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func importText(t *testing.T, s *Store, text string) ImportStats {
	t.Helper()
	r, err := slurm.NewSacctReader(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	opt := testOptions()
	opt.Carries = r.HasField // as collect imports a dump
	st, err := s.ImportJobs(context.Background(), r.Next, opt)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func devDump(t *testing.T) string {
	b, err := os.ReadFile("../../../testdata/sacct/devcluster-22.05.psv")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func countJobs(t *testing.T, s *Store) int {
	var n int
	if err := s.db.QueryRow("SELECT count(*) FROM jobs").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestImportIsIdempotent(t *testing.T) {
	s := openTemp(t)
	dump := devDump(t)
	first := importText(t, s, dump)
	if first.New != 14 || first.Updated != 0 || first.Total() != 14 {
		t.Fatalf("first import: %+v", first)
	}
	second := importText(t, s, dump)
	if second.New != 0 || second.Updated != 0 || second.Unchanged != 14 {
		t.Fatalf("second import changed something: %+v", second)
	}
	if n := countJobs(t, s); n != 14 {
		t.Fatalf("%d rows, want 14", n)
	}
}

func TestImportOfFewerFieldsKeepsWhatTheHistoryHolds(t *testing.T) {
	s := openTemp(t)
	dump := devDump(t)
	importText(t, s, dump)
	held, err := s.History(context.Background(), HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	narrow := sacctgen.WithoutFields(dump, "AllocTRES", "ReqTRES", "TRESUsageInMax", "State", "End")
	if st := importText(t, s, narrow); st.Unchanged != 14 || st.Updated != 0 {
		t.Fatalf("a narrower dump of the same jobs: %+v, want 14 unchanged", st)
	}
	kept, err := s.History(context.Background(), HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range held {
		if !reflect.DeepEqual(held[i], kept[i]) {
			t.Fatalf("a narrower dump changed job %s:\n held %+v\nafter %+v", held[i].Key, held[i], kept[i])
		}
	}

	idsAlone := slices.DeleteFunc(slices.Clone(slurm.SacctFields), func(f string) bool { return f == "JobIDRaw" || f == "Cluster" })
	if st := importText(t, s, sacctgen.WithoutFields(dump, idsAlone...)); st.Unchanged != 14 {
		t.Fatalf("a dump of the jobs' ids alone: %+v, want 14 unchanged", st)
	}

	// A field the narrower dump carries still updates the job.
	renamed := strings.Replace(sacctgen.WithoutFields(dump, "AllocTRES", "ReqTRES", "TRESUsageInMax"), "|/tmp/dc|j.sh", "|/tmp/dc|renamed.sh", 1)
	if st := importText(t, s, renamed); st.Updated != 1 || st.Unchanged != 13 {
		t.Fatalf("a narrower dump with a job renamed: %+v, want 1 updated", st)
	}
	recs, err := s.History(context.Background(), HistoryFilter{Keys: [][2]string{{"migdev", "1"}}})
	if err != nil || len(recs) != 1 {
		t.Fatalf("job 1: %v %v", recs, err)
	}
	if r := recs[0]; r.Name != "renamed.sh" || r.Profile != "1g.10gb" || r.State != "OUT_OF_MEMORY" || r.End == nil {
		t.Fatalf("job 1 after the narrower dump: name %q profile %q state %q end %v", r.Name, r.Profile, r.State, r.End)
	}
}

// A dump without ReqTRES cannot tell slurmdbd's placeholder from a job
// named "allocation": such a job's record still updates from it. Seen in
// review: the placeholder guard kept it as it was for good.
func TestANarrowDumpUpdatesAJobNamedAllocation(t *testing.T) {
	s := openTemp(t)
	header := strings.Join(slurm.SacctFields, "|") + "\n"
	running := header + "41|41|c1|u|a|gpu|normal|RUNNING|0:0|2026-11-21T01:00:00|2026-11-21T01:00:01|Unknown|5|60|1|2||8G||cpu=2,gres/gpu:a100_20g=1,gres/gpu=1,mem=8G,node=1|cpu=2,gres/gpu:a100_20g=1,mem=8G||vm|/w||allocation\n"
	if st := importText(t, s, running); st.New != 1 {
		t.Fatalf("running: %+v", st)
	}
	done := strings.Replace(running, "RUNNING|0:0|2026-11-21T01:00:00|2026-11-21T01:00:01|Unknown|5", "COMPLETED|0:0|2026-11-21T01:00:00|2026-11-21T01:00:01|2026-11-21T01:10:01|600", 1)
	if st := importText(t, s, sacctgen.WithoutFields(done, "ReqTRES")); st.Updated != 1 {
		t.Fatalf("the job's end, from a dump without ReqTRES: %+v, want 1 updated", st)
	}
	recs, err := s.History(context.Background(), HistoryFilter{Keys: [][2]string{{"c1", "41"}}})
	if err != nil || len(recs) != 1 || recs[0].State != "COMPLETED" || recs[0].Profile != "2g.20gb" {
		t.Fatalf("job 41: %+v %v", recs, err)
	}
}

func TestImportUpdatesRunningJobAndKeepsFullRecordOverStub(t *testing.T) {
	s := openTemp(t)
	header := strings.Join(slurm.SacctFields, "|") + "\n"
	running := header + "40|40|c1|u|a|gpu|normal|RUNNING|0:0|2026-11-21T01:00:00|2026-11-21T01:00:01|Unknown|5|60|1|2||8G||cpu=2,gres/gpu:a100_20g=1,gres/gpu=1,mem=8G,node=1|cpu=2,gres/gpu:a100_20g=1,mem=8G||vm|/w||train\n"
	done := strings.Replace(running, "RUNNING|0:0|2026-11-21T01:00:00|2026-11-21T01:00:01|Unknown|5", "COMPLETED|0:0|2026-11-21T01:00:00|2026-11-21T01:00:01|2026-11-21T01:10:01|600", 1) +
		"40.batch|40.batch|c1||a|||COMPLETED|0:0||||600||1|2|1||2048000K|||mem=2048000K|vm|||batch\n"
	stub := header + "40|40|c1|root|a||Unknown|COMPLETED|0:0|2026-11-21T01:00:00|2026-11-21T01:00:01|2026-11-21T01:10:01|600||1|2||16?||cpu=2,mem=8G|||vm|||allocation\n"

	if st := importText(t, s, running); st.New != 1 {
		t.Fatalf("running: %+v", st)
	}
	if st := importText(t, s, done); st.Updated != 1 || st.New != 0 {
		t.Fatalf("completed: %+v", st)
	}
	if st := importText(t, s, stub); st.Stubs != 1 || st.Updated != 0 {
		t.Fatalf("a stub replaced the full record: %+v", st)
	}
	recs, err := s.History(context.Background(), HistoryFilter{})
	if err != nil || len(recs) != 1 {
		t.Fatalf("history: %v %v", recs, err)
	}
	r := recs[0]
	if r.State != "COMPLETED" || *r.ElapsedS != 600 || r.Profile != "2g.20gb" || *r.MaxRSSMiB != 2000 || r.Name != "train" || r.Cluster != "c1" || *r.TimeLimitMin != 60 {
		t.Fatalf("record %+v", r)
	}
}

func TestImportCommitsEachBatch(t *testing.T) {
	s := openTemp(t)
	r, err := slurm.NewSacctReader(strings.NewReader(devDump(t)))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	next := func() (*slurm.AcctJob, error) {
		n++
		if n == 7 { // the second batch of 4 fails part-way, as when sacct dies
			return nil, errors.New("sacct: killed")
		}
		return r.Next()
	}
	st, err := s.ImportJobs(context.Background(), next, testOptions())
	if err == nil {
		t.Fatal("no error from an interrupted import")
	}
	if got := countJobs(t, s); got != 4 || st.New != 4 {
		t.Fatalf("%d rows kept (stats %+v), want the first batch of 4", got, st)
	}
}

func TestTrackedAndHistoryJoin(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	importText(t, s, devDump(t))
	at := time.Unix(1_790_000_000, 0)
	subs := []Submission{
		{Cluster: "migdev", JobID: "8", Fingerprint: "f1", Source: "/x/array.sh", Script: "/x/array.sh", WorkDir: "/tmp/fx", Submitted: at, Workload: "arr"},
		{Cluster: "migdev", JobID: "2", Fingerprint: "f2", Source: "/x/complete.sh", Script: "/s/1g.10gb.sh", Profile: "1g.10gb", SweepDir: "/s", Submitted: at},
		{Cluster: "migdev", JobID: "99", Fingerprint: "f2", Source: "/x/complete.sh", Script: "/s/full.sh", Profile: "full", SweepDir: "/s", Submitted: at},
	}
	if err := s.RecordSubmissions(ctx, subs); err != nil {
		t.Fatal(err)
	}
	tr, err := s.Tracked(ctx, TrackedFilter{})
	if err != nil || len(tr) != 3 {
		t.Fatalf("tracked %+v %v", tr, err)
	}
	if tr[0].JobID != "2" || !tr[0].Ended() || tr[1].JobID != "8" || len(tr[1].Jobs) != 3 || !tr[1].Ended() {
		t.Fatalf("tracked %+v", tr)
	}
	if tr[2].JobID != "99" || tr[2].Ended() {
		t.Error("a job accounting has not seen counts as ended")
	}
	ev, err := slurm.ScanOutput(strings.NewReader("MIGADVISOR_WORK 1200 samples\nMIGADVISOR_METRIC acc 97.5\n"+
		"MIGADVISOR_VERSION torch 2.11.0+cu130\nMIGADVISOR_VERSION device NVIDIA H100 80GB HBM3\n"+
		"MIGADVISOR_GPU peak_mib=5000 used_peak_mib=5200 total_mib=9728 samples=40 scope=tree util=unsupported profile=1g.10gb device=A100 MIG 1g.10gb\n"), slurm.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RecordOutput(ctx, "migdev", "2", "/tmp/fx/slurm-2.out", 100, at, ev); err != nil {
		t.Fatal(err)
	}
	recs, err := s.History(ctx, HistoryFilter{Fingerprint: "f2"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("history of f2: %+v %v", recs, err)
	}
	r := recs[0]
	if r.JobID != "2" || r.RequestedProfile != "1g.10gb" || r.Profile != "1g.10gb" || *r.Work != 1200 || r.Metrics["acc"] != 97.5 ||
		*r.GPUMemPeakMiB() != 5000 || r.OOM() != "" || r.OutputPath != "/tmp/fx/slurm-2.out" {
		t.Fatalf("record %+v", r)
	}
	if *r.MonitorUsedPeakMiB != 5200 || *r.MonitorTotalMiB != 9728 || r.MonitorProfile != "1g.10gb" || r.MonitorUtil != "unsupported" ||
		r.MonitorUtilMean != nil || *r.MonitorSamples != 40 || r.MonitorSource != "line" {
		t.Fatalf("monitor figures %+v", r)
	}
	if r.Versions["torch"] != "2.11.0+cu130" || r.Versions["device"] != "NVIDIA H100 80GB HBM3" {
		t.Fatalf("versions %v", r.Versions)
	}
	arr, _ := s.History(ctx, HistoryFilter{Fingerprint: "f1"})
	if len(arr) != 3 || arr[0].Workload != "arr" {
		t.Fatalf("array tasks: %+v", arr)
	}
	if tagged, _ := s.History(ctx, HistoryFilter{Workload: "arr"}); len(tagged) != 3 || tagged[0].Versions != nil {
		t.Fatalf("jobs of workload arr: %+v", tagged)
	}
	if w, err := s.Workloads(ctx); err != nil || len(w) != 1 || w[0] != (WorkloadCount{"arr", 1}) {
		t.Fatalf("workloads %+v %v", w, err)
	}
	all, _ := s.History(ctx, HistoryFilter{})
	oom := map[string]string{}
	for _, r := range all {
		oom[r.JobID] = r.OOM()
	}
	if oom["1"] != "host" || oom["4"] != "host" || oom["2"] != "" || len(all) != 14 {
		t.Fatalf("oom by job: %v", oom)
	}
}

func TestQueueWaitIsTheMedianOfTheNewestJobsOfAType(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	importText(t, s, string(sacctgen.Bytes(100, "|")))
	// sacctgen's jobs start 30 s after submission; one in five asks for a100_10g.
	w, err := s.QueueWait(ctx, []string{"a100_10g"}, time.Unix(0, 0), 1000)
	if err != nil || w.Jobs != 20 || w.MedianS != 30 {
		t.Fatalf("wait %+v %v, want 20 jobs, 30 s", w, err)
	}
	if _, err := s.db.Exec(`UPDATE jobs SET start = submit + 3600 WHERE gpu_type = 'a100_10g' AND CAST(job_key AS INTEGER) >= 1000090`); err != nil {
		t.Fatal(err)
	}
	if w, _ := s.QueueWait(ctx, []string{"a100_10g"}, time.Unix(0, 0), 3); w.Jobs != 3 || w.MedianS != 3600 {
		t.Errorf("newest 3: %+v, want the two hour-long waits to win", w)
	}
	if w, _ := s.QueueWait(ctx, []string{"a100_10g", "a100_20g"}, time.Unix(0, 0), 1000); w.Jobs != 40 {
		t.Errorf("two types: %+v", w)
	}
	if w, _ := s.QueueWait(ctx, []string{"a100_10g"}, time.Unix(1_900_000_000, 0), 1000); w.Jobs != 0 {
		t.Errorf("since the future: %+v", w)
	}
}

// The median SQLite hands back is the median of the waits read: of an odd
// and an even number of them, of one GPU type and of two, whatever the
// limit.
func TestQueueWaitIsTheMedianOfTheWaitsRead(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	importText(t, s, string(sacctgen.Bytes(300, "|")))
	if _, err := s.db.Exec(`UPDATE jobs SET start = submit + (CAST(job_key AS INTEGER) * 7919) % 1000`); err != nil {
		t.Fatal(err)
	}
	median := func(types []string, limit int) QueueWait {
		var waits []float64
		for _, typ := range types {
			rows, err := s.db.Query(`SELECT start - submit FROM jobs WHERE gpu_type = ? AND stub = 0 AND start >= submit
				ORDER BY submit DESC LIMIT ?`, typ, limit)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var w float64
				rows.Scan(&w)
				waits = append(waits, w)
			}
			rows.Close()
		}
		slices.Sort(waits)
		n := len(waits)
		if n == 0 {
			return QueueWait{}
		}
		if n%2 == 1 {
			return QueueWait{MedianS: waits[n/2], Jobs: n}
		}
		return QueueWait{MedianS: (waits[n/2-1] + waits[n/2]) / 2, Jobs: n}
	}
	for _, types := range [][]string{{"a100_10g"}, {"a100_10g", "a100_20g"}, {"a100_40g", "nosuchtype"}} {
		for _, limit := range []int{1, 2, 7, 10, 1000} {
			got, err := s.QueueWait(ctx, types, time.Unix(0, 0), limit)
			if want := median(types, limit); err != nil || got != want {
				t.Errorf("%v, newest %d: %+v %v, want %+v", types, limit, got, err, want)
			}
		}
	}
}

// Jobstats summaries in AdminComment are imported with their jobs: the
// peak, total and utilization they give are the jobs' (the peak's source
// said), and one that cannot be read is counted and named, its job
// imported all the same.
func TestImportReadsJobstatsSummaries(t *testing.T) {
	s := openTemp(t)
	gen := sacctgen.New(10, "|")
	gen.Jobstats = true
	dump, _ := io.ReadAll(gen)
	bad := strings.Replace(string(dump), sacctgen.JobstatsSummary("a100_20g", 1), "JS1:!!!", 1)
	if bad == string(dump) {
		t.Fatal("job 1 has no summary to break")
	}
	st := importText(t, s, bad)
	// Jobs 0..9: the GPU types cycle a100_10g, a100_20g, a100_40g, a100, none;
	// job 1 (a100_20g) has the broken summary.
	if st.New != 10 || st.Jobstats != 7 || st.BadJobstats != 1 || len(st.BadJobstatsJobs) != 1 ||
		st.BadJobstatsJobs[0].JobID != fmt.Sprint(sacctgen.FirstJobID+1) || !strings.Contains(st.BadJobstatsJobs[0].Err, "not base64") {
		t.Fatalf("import: %+v", st)
	}
	recs, err := s.History(context.Background(), HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]JobRecord{}
	for _, r := range recs {
		byID[r.JobID] = r
	}
	full := byID[fmt.Sprint(sacctgen.FirstJobID+3)] // a100, job 3: 4 GiB used, utilization 23%
	if p := full.GPUMemPeakMiB(); p == nil || *p != 4096 || full.GPUMemSource() != PeakJobstats ||
		*full.JobstatsTotalMiB != 81920 || *full.GPUUtilizationPct() != 23 {
		t.Errorf("job 3: peak %v from %q, total %v, util %v", p, full.GPUMemSource(), full.JobstatsTotalMiB, full.GPUUtilizationPct())
	}
	slice := byID[fmt.Sprint(sacctgen.FirstJobID+5)] // a100_10g, job 5: 6 GiB, no utilization on MIG
	if p := slice.GPUMemPeakMiB(); p == nil || *p != 6144 || slice.GPUUtilizationPct() != nil {
		t.Errorf("job 5: peak %v, util %v", p, slice.GPUUtilizationPct())
	}
	if broken := byID[fmt.Sprint(sacctgen.FirstJobID+1)]; broken.GPUMemPeakMiB() != nil || broken.State == "" {
		t.Errorf("job 1, its summary broken: %+v", broken)
	}
}

// The submissions of a sweep directory are its own sweep's and those of
// its subdirectories (a probe's --ladder writes one per rung), never a
// sibling's whose name starts alike.
func TestTrackedOfASweepDirectoryTakesItsRungs(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	at := time.Unix(1_790_000_000, 0)
	subs := []Submission{
		{Cluster: "c", JobID: "1", Fingerprint: "f", Script: "/p/1g.10gb/1g.10gb.sh", Profile: "1g.10gb", SweepDir: "/p/1g.10gb", Submitted: at},
		{Cluster: "c", JobID: "2", Fingerprint: "f", Script: "/p/2g.20gb/2g.20gb.sh", Profile: "2g.20gb", SweepDir: "/p/2g.20gb", Submitted: at},
		{Cluster: "c", JobID: "3", Fingerprint: "f", Script: "/p2/full.sh", Profile: "full", SweepDir: "/p2", Submitted: at},
		{Cluster: "c", JobID: "4", Fingerprint: "f", Script: "/p_x/full.sh", Profile: "full", SweepDir: "/p_x", Submitted: at},
	}
	if err := s.RecordSubmissions(ctx, subs); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{"/p": "1 2", "/p/2g.20gb": "2", "/p2": "3", "/p_": ""} {
		tr, err := s.Tracked(ctx, TrackedFilter{SweepDir: dir})
		var ids []string
		for _, x := range tr {
			ids = append(ids, x.JobID)
		}
		if err != nil || strings.Join(ids, " ") != want {
			t.Errorf("the sweep in %s: %v, %v; want %q", dir, ids, err, want)
		}
	}
}
