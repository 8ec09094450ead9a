package history

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

// oomOutput is the end of an emulated 1g.10gb run that ran out of memory.
const oomOutput = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 79.18 GiB of which 169.66 MiB is free. Including non-PyTorch memory, this process has 9.33 GiB memory in use. Of the allocated memory 9.25 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.\n" +
	"MIGADVISOR_GPU peak_mib=9558 used_peak_mib=9633 total_mib=81559 samples=16 scope=tree util=mean:0,max:0 mem_util=mean:0,max:0 device=NVIDIA H100 80GB HBM3\n"

// emulatedRuns are an emulation's runs: 1g.10gb out of memory, 2g.20gb and
// the whole GPU completed at 14.5 GiB.
func emulatedRuns(t *testing.T) []EmulatedRun {
	t.Helper()
	gpu := "NVIDIA H100 80GB HBM3"
	return []EmulatedRun{
		{Profile: "1g.10gb", GPU: gpu, Percentage: 13, MemLimit: "0=9728M", Outcome: "failed", ExitStatus: 1, Seconds: 7.718,
			Evidence: *scanned(t, oomOutput)},
		{Profile: "2g.20gb", GPU: gpu, Percentage: 26, MemLimit: "0=19968M", Outcome: "completed", Seconds: 5.27,
			Evidence: *scanned(t, "held 14336 MiB\nMIGADVISOR_GPU peak_mib=14488 used_peak_mib=14563 total_mib=81559 samples=11 scope=tree device=NVIDIA H100 80GB HBM3\n")},
		{Profile: "full", GPU: gpu, Percentage: 100, Outcome: "completed", Seconds: 5.102,
			Evidence: *scanned(t, "held 14336 MiB\n")},
	}
}

// describeEmulated is each record's emulated runs in one line, by job id:
// profile, SMs, cap, outcome, exit, peak and OOM of each.
func describeEmulated(recs []JobRecord) map[string]string {
	out := map[string]string{}
	for _, r := range recs {
		var runs []string
		for _, e := range r.Emulated {
			runs = append(runs, fmt.Sprintf("%s %d%% %q %s %d %v %s %q", e.Profile, e.Percentage, e.MemLimit, e.Outcome, e.ExitStatus,
				figure(e.PeakMiB()), e.GPU, e.OOM()))
		}
		out[r.JobID] = strings.Join(runs, "; ")
	}
	return out
}

func historyOf(t *testing.T, s *Store, f HistoryFilter) []JobRecord {
	t.Helper()
	recs, err := s.History(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// The runs a job's emulation made come back with the job's record, their
// evidence whole (the GPU OOM's message and need, figures it lacks still
// unknown), in the emulation's order; a job without one has none, and
// recording a job's emulation again replaces its runs, its alone.
func TestRecordEmulatedReplacesTheJobsRuns(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	importAs(t, s, "migdev", noClusterDump)
	runs := emulatedRuns(t)
	if err := s.RecordEmulated(ctx, "migdev", "4242", runs); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordEmulated(ctx, "migdev", "4243", runs[2:]); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"4242": `1g.10gb 13% "0=9728M" failed 1 9558 NVIDIA H100 80GB HBM3 "gpu"; ` +
			`2g.20gb 26% "0=19968M" completed 0 14488 NVIDIA H100 80GB HBM3 ""; full 100% "" completed 0 <nil> NVIDIA H100 80GB HBM3 ""`,
		"4243": `full 100% "" completed 0 <nil> NVIDIA H100 80GB HBM3 ""`,
	}
	recs := historyOf(t, s, HistoryFilter{})
	if got := describeEmulated(recs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("emulated runs:\n got %v\nwant %v", got, want)
	}
	for _, r := range recs {
		if r.JobID != "4242" {
			continue
		}
		oom, ev := r.Emulated[0].Evidence.GPUOOM, r.Emulated[0].Evidence
		if oom == nil || oom.Source != "pytorch" || !strings.Contains(oom.Text, "CUDA out of memory") || oom.NeedMiB < 9000 {
			t.Errorf("1g.10gb's OOM: %+v", oom)
		}
		if ev.Work != slurm.Unknown || ev.GPUTotalMiB != 81559 || r.Emulated[0].Seconds != 7.718 {
			t.Errorf("1g.10gb's evidence: work %v total %v, %v s", ev.Work, ev.GPUTotalMiB, r.Emulated[0].Seconds)
		}
	}

	// Again, with fewer runs: the job's are replaced, the other job's stay.
	again := []EmulatedRun{runs[1]}
	again[0].Outcome, again[0].ExitStatus = "budget", 143
	if err := s.RecordEmulated(ctx, "migdev", "4242", again); err != nil {
		t.Fatal(err)
	}
	want["4242"] = `2g.20gb 26% "0=19968M" budget 143 14488 NVIDIA H100 80GB HBM3 ""`
	if got := describeEmulated(historyOf(t, s, HistoryFilter{})); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("recorded again:\n got %v\nwant %v", got, want)
	}
	// None clears them.
	if err := s.RecordEmulated(ctx, "migdev", "4243", nil); err != nil {
		t.Fatal(err)
	}
	if n := s.count(t, `SELECT count(*) FROM emulated_runs WHERE job_key = '4243'`); n != 0 {
		t.Errorf("%d runs left after recording none", n)
	}
}

// Every way History reads records gives them their runs: by key, by
// script, with a limit, and a job linked to a script's earlier version.
func TestHistoryReadsEmulatedRunsOfEveryRecord(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	importAs(t, s, "migdev", noClusterDump)
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	if err := s.RecordSubmissions(ctx, []Submission{
		{Cluster: "migdev", JobID: "4242", Fingerprint: "old", Source: "/w/train.sh", Script: "/w/train.sh", Submitted: at},
		{Cluster: "migdev", JobID: "4243", Fingerprint: "new", Source: "/w/train.sh", Script: "/w/train.sh", Submitted: at.Add(time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
	runs := emulatedRuns(t)
	for key, rs := range map[string][]EmulatedRun{"4242": runs[:1], "4243": runs[1:2]} {
		if err := s.RecordEmulated(ctx, "migdev", key, rs); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		f    HistoryFilter
		want string
	}{
		{"by key", HistoryFilter{Keys: [][2]string{{"migdev", "4242"}}}, "4242:1g.10gb"},
		{"by script", HistoryFilter{Fingerprint: "new"}, "4243:2g.20gb"},
		{"limit", HistoryFilter{Limit: 1}, "4243:2g.20gb"},
		{"with earlier versions", HistoryFilter{Fingerprint: "new", Versions: &Versions{Path: "/w/train.sh"}}, "4243:2g.20gb 4242:1g.10gb"},
		{"earlier versions only", HistoryFilter{Fingerprint: "new", Versions: &Versions{Path: "/w/train.sh", Only: true}}, "4242:1g.10gb"},
	} {
		var got []string
		for _, r := range historyOf(t, s, tc.f) {
			var profiles []string
			for _, e := range r.Emulated {
				profiles = append(profiles, e.Profile)
			}
			got = append(got, r.JobID+":"+strings.Join(profiles, ","))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, got, tc.want)
		}
	}
}

// A history of the schema before emulated runs is migrated: its jobs keep
// their evidence, and their emulations are recorded and read.
func TestSchemaBeforeEmulatedRunsIsMigrated(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:schemaEmulated-1] {
		if _, err := db.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(fmt.Sprintf(`PRAGMA user_version = %d; INSERT INTO outputs(cluster, job_key, path, size, mtime, truncated,
		host_oom, time_limit, cancelled, gpu_peak_mib, gpu_util, gpu_util_mean, gpu_util_max, gpu_source, gpu_mem_util_mean, gpu_mem_util_max)
		VALUES ('migdev', '4243', '/o/4243', 1, 1, 0, 0, 0, 0, 4096, 'supported', 40, 90, 'line', 20, 50)`, schemaEmulated-1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, _ := s.Version(ctx); v != SchemaVersion || SchemaVersion < schemaEmulated {
		t.Errorf("version %d, want %d (schemaEmulated %d)", v, SchemaVersion, schemaEmulated)
	}
	importAs(t, s, "migdev", noClusterDump)
	if err := s.RecordEmulated(ctx, "migdev", "4242", emulatedRuns(t)[:1]); err != nil {
		t.Fatal(err)
	}
	recs := historyOf(t, s, HistoryFilter{})
	if got := memUtils(recs)["4243"]; got != "mem 20 max 50 gpu 40" {
		t.Errorf("4243's evidence after the migration: %s", got)
	}
	want := map[string]string{"4242": `1g.10gb 13% "0=9728M" failed 1 9558 NVIDIA H100 80GB HBM3 "gpu"`, "4243": ""}
	if got := describeEmulated(recs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("migrated history: %v, want %v", got, want)
	}
}

// A history of the schema before emulated runs that this user cannot
// migrate (a site-wide one) is read read-only, with none; one of this
// schema read read-only has its runs.
func TestReadOnlyReadsTheSchemaBeforeEmulatedRuns(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, old := range []bool{false, true} {
		path := filepath.Join(dir, fmt.Sprintf("old-%v.db", old))
		w, err := OpenWith(ctx, path, Options{BusyTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		importAs(t, w, "migdev", noClusterDump)
		recordLine(t, w, "migdev", "4242", memUtilLine)
		if err := w.RecordEmulated(ctx, "migdev", "4242", emulatedRuns(t)); err != nil {
			t.Fatal(err)
		}
		if old { // as the older one left it: no table
			if _, err := w.db.Exec(fmt.Sprintf(`DROP TABLE emulated_runs; PRAGMA user_version = %d`, schemaEmulated-1)); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		ro, err := OpenWith(ctx, path, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		recs, err := ro.History(ctx, HistoryFilter{})
		ro.Close()
		if err != nil {
			t.Fatalf("old %v: %v", old, err)
		}
		runs := map[string]int{}
		for _, r := range recs {
			runs[r.JobID] = len(r.Emulated)
		}
		want := map[string]int{"4242": 3, "4243": 0}
		if old {
			want["4242"] = 0
		}
		if fmt.Sprint(runs) != fmt.Sprint(want) || memUtils(recs)["4242"] != "mem 21 max 60 gpu 43" {
			t.Errorf("old %v: runs %v, want %v; evidence %s", old, runs, want, memUtils(recs)["4242"])
		}
	}
}

// More jobs than the look-up list takes are read through the whole table,
// with the same answer.
func TestEmulatedRunsOfManyJobs(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	importAs(t, s, "migdev", noClusterDump)
	if err := s.RecordEmulated(ctx, "migdev", "4243", emulatedRuns(t)); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordEmulated(ctx, "elsewhere", "4242", emulatedRuns(t)); err != nil {
		t.Fatal(err)
	}
	recs := historyOf(t, s, HistoryFilter{})
	many := make([]JobRecord, 0, emulatedByTable+len(recs))
	for i := 0; i < emulatedByTable; i++ {
		many = append(many, JobRecord{Cluster: "migdev", Key: fmt.Sprint(i), JobID: fmt.Sprint(i)})
	}
	for _, r := range recs {
		r.Emulated = nil
		many = append(many, r)
	}
	if err := s.fillEmulated(ctx, many); err != nil {
		t.Fatal(err)
	}
	got := describeEmulated(many[emulatedByTable:])
	if want := describeEmulated(recs); fmt.Sprint(got) != fmt.Sprint(want) || !strings.HasPrefix(got["4243"], "1g.10gb") || got["4242"] != "" {
		t.Errorf("through the table: %v, want %v", got, want)
	}
}

// Filing a fallback's jobs under the real name takes their emulated runs
// along, unless the real name's record has its own.
func TestFallbackJobsTakeTheirEmulatedRuns(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	importAs(t, s, "local", dumpLines("4242 4243", same))
	importAs(t, s, "migdev", dumpLines("4242 4243", same))
	runs := emulatedRuns(t)
	for _, e := range []struct {
		cluster, key string
		runs         []EmulatedRun
	}{{"local", "4242", runs}, {"local", "4243", runs[:1]}, {"migdev", "4243", runs[2:]}} {
		if err := s.RecordEmulated(ctx, e.cluster, e.key, e.runs); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.MergeFallbackJobs(ctx, []string{"local"}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range historyOf(t, s, HistoryFilter{}) {
		var profiles []string
		for _, e := range r.Emulated {
			profiles = append(profiles, e.Profile)
		}
		got[r.Cluster+"/"+r.JobID] = strings.Join(profiles, ",")
	}
	want := map[string]string{"migdev/4242": "1g.10gb,2g.20gb,full", "migdev/4243": "full"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the merge: %v, want %v", got, want)
	}
	if n := s.count(t, `SELECT count(*) FROM emulated_runs WHERE cluster = 'local'`); n != 0 {
		t.Errorf("%d emulated runs left under the fallback name", n)
	}
}
