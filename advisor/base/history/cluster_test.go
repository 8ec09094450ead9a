package history

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

// noClusterDump is a dump saved without the Cluster column, as users write
// them: its jobs take the name the import is given.
const noClusterDump = `JobIDRaw|JobID|User|State|ExitCode|Submit|Start|End|ElapsedRaw|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName
4242|4242|alice|COMPLETED|0:0|2026-11-21T02:00:00|2026-11-21T02:00:05|2026-11-21T02:01:05|60|1|4|16G|billing=4,cpu=4,gres/gpu:a100_10g=1,gres/gpu=1,mem=16G,node=1|train.sh
4243|4243|alice|COMPLETED|0:0|2026-11-21T03:00:00|2026-11-21T03:00:05|2026-11-21T03:01:05|60|1|4|16G|billing=4,cpu=4,gres/gpu:a100_20g=1,gres/gpu=1,mem=16G,node=1|train.sh
`

func importAs(t *testing.T, s *Store, cluster, text string) {
	t.Helper()
	r, err := slurm.NewSacctReader(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	opt := testOptions()
	opt.Cluster = cluster
	if _, err := s.ImportJobs(context.Background(), r.Next, opt); err != nil {
		t.Fatal(err)
	}
}

func jobIDs(recs []JobRecord) []string {
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.Cluster+"/"+r.JobID)
	}
	return ids
}

// A dump imported under one name and the jobs tracked under slurmctld's:
// the submissions find their jobs when exactly one cluster holds them, in
// every query, and RelinkSubmissions files them there for good.
func TestSubmissionsFindTheirJobsUnderAnotherClusterName(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	importAs(t, s, "local", noClusterDump)
	// Another cluster ran a job 4243 too, a day earlier: which one is meant is not known.
	otherDump := strings.Replace(noClusterDump, "2026-11-21T03:00:00", "2026-11-20T03:00:00", 1)
	importAs(t, s, "other", strings.Replace(otherDump, "4242|4242", "1|1", 1))
	// Job 7 ran on "other" after it was tracked here: another job of the same number.
	importAs(t, s, "other", strings.Replace(strings.Replace(otherDump, "4242|4242", "7|7", 1), "2026-11-21T02:00:00", "2026-11-23T02:00:00", 1))
	tracked := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	var subs []Submission
	for _, id := range []string{"4242", "4243", "7", "5000"} {
		subs = append(subs, Submission{Cluster: "migdev", JobID: id, Fingerprint: "fp", Source: "/u/train.sh", Script: "/u/train.sh", Submitted: tracked})
	}
	if err := s.RecordSubmissions(ctx, subs); err != nil {
		t.Fatal(err)
	}

	check := func(s *Store, when string) {
		t.Helper()
		recs, err := s.History(ctx, HistoryFilter{Fingerprint: "fp"})
		if err != nil || !slices.Equal(jobIDs(recs), []string{"local/4242"}) {
			t.Errorf("%s: history of the script: %v %v", when, jobIDs(recs), err)
		}
		tr, err := s.Tracked(ctx, TrackedFilter{Fingerprint: "fp"})
		if err != nil || len(tr) != 4 {
			t.Fatalf("%s: tracked %+v %v", when, tr, err)
		}
		for _, t0 := range tr {
			want := t0.JobID == "4242"
			if got := len(t0.Jobs) == 1 && t0.Cluster == "local"; got != want {
				t.Errorf("%s: job %s linked %v, want %v: %+v", when, t0.JobID, got, want, t0)
			}
		}
	}
	check(s, "before relinking")
	ro, err := OpenWith(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	check(ro, "read-only")
	ro.Close()

	if n, err := s.RelinkSubmissions(ctx); err != nil || n != 1 {
		t.Fatalf("relinked %d, %v; want 1", n, err)
	}
	check(s, "after relinking")
	if n, err := s.RelinkSubmissions(ctx); err != nil || n != 0 {
		t.Errorf("relinking again moved %d, %v", n, err)
	}
	// Output scans read the jobs linked to submissions through the jobs table.
	if recs, err := s.History(ctx, HistoryFilter{Tracked: true}); err != nil || !slices.Equal(jobIDs(recs), []string{"local/4242"}) {
		t.Errorf("tracked jobs: %v %v", jobIDs(recs), err)
	}
	for id, want := range map[string][]string{"4242": {"local"}, "4243": {"local", "other"}, "5000": nil} {
		if got, err := s.ClustersOfJob(ctx, id); err != nil || !slices.Equal(got.Names, want) {
			t.Errorf("clusters of job %s: %v %v, want %v", id, got, err, want)
		}
	}
}

// The cluster name a history last used is kept for the commands that cannot
// ask Slurm; a history of the schema before settings existed has none.
func TestHistoryRemembersItsClusterName(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if name, err := s.ClusterName(ctx); err != nil || name != "" {
		t.Fatalf("a new history's cluster: %q %v", name, err)
	}
	for _, name := range []string{"migdev", "migdev", "wulver"} {
		if err := s.RememberCluster(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if name, err := s.ClusterName(ctx); err != nil || name != "wulver" {
		t.Errorf("cluster %q %v, want the last one", name, err)
	}
}

// A history that an older migadvisor wrote (schema 7, before settings) is
// read read-only by this one: its runs, and no cluster name.
func TestReadOnlyReadsTheSchemaBeforeSettings(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite3", path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:oldestReadable] {
		if _, err := db.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec("PRAGMA user_version = 7"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	w, err := OpenWith(ctx, path, Options{BusyTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Fill it as the older one did (its tables are the same), then put the schema back.
	importAs(t, w, "migdev", noClusterDump)
	if err := w.RecordSubmissions(ctx, []Submission{{Cluster: "migdev", JobID: "4242", Fingerprint: "fp", Source: "/u/train.sh", Submitted: time.Now()},
		{Cluster: "migdev", JobID: "4243", Fingerprint: "old", Source: "/u/train.sh", Submitted: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.Exec("DROP TABLE settings; DROP TABLE script_names; DROP INDEX scripts_by_path; DROP INDEX submissions_made_here; PRAGMA user_version = 7"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	ro, err := OpenWith(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if recs, err := ro.History(ctx, HistoryFilter{Fingerprint: "fp", Versions: &Versions{Path: "/u/train.sh", JobNames: []string{"train.sh"}}}); err != nil || len(recs) != 2 {
		t.Errorf("history: %v %v", jobIDs(recs), err)
	}
	if name, err := ro.ClusterName(ctx); err != nil || name != "" {
		t.Errorf("cluster %q %v", name, err)
	}
}

// versionsDump: jobs of train.sh (4 CPUs, 16G) and its look-alikes.
const versionsDump = `JobIDRaw|JobID|User|State|ExitCode|Submit|Start|End|ElapsedRaw|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName
100|100|alice|COMPLETED|0:0|2026-11-20T01:00:00|2026-11-20T01:00:05|2026-11-20T01:01:05|60|1|4|16G|cpu=4,gres/gpu:a100_10g=1,gres/gpu=1,mem=16G,node=1|train.sh
101|101|alice|COMPLETED|0:0|2026-11-20T02:00:00|2026-11-20T02:00:05|2026-11-20T02:01:05|60|1|4|16G|cpu=4,gres/gpu:a100_20g=1,gres/gpu=1,mem=16G,node=1|train.sh
102|102|alice|COMPLETED|0:0|2026-11-20T03:00:00|2026-11-20T03:00:05|2026-11-20T03:01:05|60|1|8|16G|cpu=8,gres/gpu:a100_20g=1,gres/gpu=1,mem=16G,node=1|train.sh
103|103|alice|COMPLETED|0:0|2026-11-20T04:00:00|2026-11-20T04:00:05|2026-11-20T04:01:05|60|1|4|16G|cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1|renamed
104|104|alice|COMPLETED|0:0|2026-11-20T05:00:00|2026-11-20T05:00:05|2026-11-20T05:01:05|60|1|4|16G|cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1|train.sh
105|105|bob|COMPLETED|0:0|2026-11-20T06:00:00|2026-11-20T06:00:05|2026-11-20T06:01:05|60|1|4|16G|cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1|train.sh
106|106|alice|COMPLETED|0:0|2026-11-20T07:00:00|2026-11-20T07:00:05|2026-11-20T07:01:05|60|1|4|8G|cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=8G,node=1|train.sh
107|107|alice|COMPLETED|0:0|2026-11-20T08:00:00|2026-11-20T08:00:05|2026-11-20T08:01:05|60|1|4|16G|cpu=4,gres/gpu:a100_40g=1,gres/gpu=1,mem=16G,node=1|train-3g.40gb
108|108|alice|COMPLETED|0:0|2026-11-20T09:00:00|2026-11-20T09:00:05|2026-11-20T09:01:05|60|1|4|16G|cpu=4,gres/gpu:a100_40g=1,gres/gpu=1,mem=16G,node=1|train.sh
`

// The jobs of a script's earlier versions (other fingerprints): by the path
// their script was last seen at, and by job name with the same CPUs and
// memory (of the same user where one is named), whether a user's own
// submission or slurmdbd's script linked them; the script's own jobs come
// once, unmarked; a job no script is known for is no version of it.
func TestHistoryFindsTheJobsOfEarlierVersions(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	importAs(t, s, "migdev", versionsDump)
	at := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	var subs []Submission
	for id, fp := range map[string]string{"100": "old", "103": "old", "104": "new"} {
		subs = append(subs, Submission{Cluster: "migdev", JobID: id, Fingerprint: fp, Source: "/u/train.sh", Script: "/u/train.sh", Submitted: at})
	}
	// A sweep's variant of a copy elsewhere, and the rest from slurmdbd's scripts (collect --scripts).
	subs = append(subs, Submission{Cluster: "migdev", JobID: "107", Fingerprint: "copy", Source: "/v/train.sh", Script: "/v/sweep/3g.40gb.sh", Submitted: at})
	for _, id := range []string{"101", "102", "105", "106"} {
		subs = append(subs, Submission{Cluster: "migdev", JobID: id, Fingerprint: "site" + id, Source: "sacct:migdev/" + id, Script: "sacct:migdev/" + id, Submitted: at})
	}
	if err := s.RecordSubmissions(ctx, subs); err != nil {
		t.Fatal(err)
	}
	v := &Versions{Path: "/u/train.sh", JobNames: []string{"train.sh", "train-3g.40gb"}, CPUs: 4, MemMiB: 16384, User: "alice"}
	recs, err := s.History(ctx, HistoryFilter{Fingerprint: "new", Versions: v})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.JobID+":"+r.EarlierBy)
	}
	// Newest first; 102 asked for 8 CPUs, 105 is bob's, 106 asked for 8G, 108 is no script's.
	if want := []string{"107:name", "104:", "103:path", "101:name", "100:path"}; !slices.Equal(got, want) {
		t.Errorf("jobs %v, want %v", got, want)
	}
	for _, r := range recs {
		if r.Earlier != (r.EarlierBy != "") {
			t.Errorf("job %s: earlier %v by %q", r.JobID, r.Earlier, r.EarlierBy)
		}
	}
	if recs, _ := s.History(ctx, HistoryFilter{Fingerprint: "new", Versions: v, Limit: 2}); !slices.Equal(jobIDs(recs), []string{"migdev/107", "migdev/104"}) {
		t.Errorf("the newest 2: %v", jobIDs(recs))
	}
	anyone := *v
	anyone.User, anyone.CPUs, anyone.MemMiB = "", 0, 0
	if recs, _ := s.History(ctx, HistoryFilter{Fingerprint: "new", Versions: &anyone}); len(recs) != 8 {
		t.Errorf("without user or resources: %v", jobIDs(recs))
	}
	if recs, _ := s.History(ctx, HistoryFilter{Fingerprint: "new"}); !slices.Equal(jobIDs(recs), []string{"migdev/104"}) {
		t.Errorf("without versions: %v", jobIDs(recs))
	}
}

// A wrapper's record (no cluster name) drained again after a collect named
// it is not listed twice: two processes may drain the same spooled file.
func TestAnAdoptedSubmissionIsNotRecordedAgain(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	sub := Submission{JobID: "77", Fingerprint: "fp", Source: "/u/job.sh", Script: "/u/job.sh", Submitted: time.Unix(1_790_000_000, 0)}
	for _, step := range []func() error{
		func() error { return s.RecordSubmissions(ctx, []Submission{sub}) },
		func() error { return s.AdoptSubmissions(ctx, "migdev") },
		func() error { return s.RecordSubmissions(ctx, []Submission{sub}) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := s.Tracked(ctx, TrackedFilter{})
	if err != nil || len(tr) != 1 || tr[0].Cluster != "migdev" {
		t.Errorf("tracked %+v %v, want job 77 once, on migdev", tr, err)
	}
	// A history where the race left the record twice loses the unnamed copy at the next adoption.
	if _, err := s.db.Exec(`INSERT INTO submissions(cluster, job_id, fingerprint, script, profile, sweep_dir, workload, work_dir, stdout, stderr, submitted)
		SELECT '', job_id, fingerprint, script, profile, sweep_dir, workload, work_dir, stdout, stderr, submitted FROM submissions`); err != nil {
		t.Fatal(err)
	}
	if err := s.AdoptSubmissions(ctx, "migdev"); err != nil {
		t.Fatal(err)
	}
	if tr, _ := s.Tracked(ctx, TrackedFilter{}); len(tr) != 1 {
		t.Errorf("tracked %+v after adopting again, want job 77 once", tr)
	}
	// Another submission of the same id (a new job, later) is recorded.
	sub.Submitted = sub.Submitted.Add(time.Hour)
	if err := s.RecordSubmissions(ctx, []Submission{sub}); err != nil {
		t.Fatal(err)
	}
	if tr, _ := s.Tracked(ctx, TrackedFilter{}); len(tr) != 2 {
		t.Errorf("tracked %+v, want the later submission too", tr)
	}
}

// The look across cluster names is spared only while the history has one:
// jobs under one name, and submissions under it or none yet.
func TestOneClusterIsTheHistoryUnderOneName(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if !s.oneCluster(ctx) {
		t.Error("an empty history")
	}
	importAs(t, s, "migdev", noClusterDump)
	sub := func(cluster, id string) Submission {
		return Submission{Cluster: cluster, JobID: id, Fingerprint: "fp", Source: "/x.sh", Script: "/x.sh", Submitted: time.Now()}
	}
	if err := s.RecordSubmissions(ctx, []Submission{sub("migdev", "4242"), sub("", "4243")}); err != nil {
		t.Fatal(err)
	}
	if !s.oneCluster(ctx) {
		t.Error("jobs and submissions under migdev, and a wrapper's record with no name yet")
	}
	if err := s.RecordSubmissions(ctx, []Submission{sub("local", "4243")}); err != nil {
		t.Fatal(err)
	}
	if s.oneCluster(ctx) {
		t.Error("a submission under local")
	}
	recs, err := s.History(ctx, HistoryFilter{Fingerprint: "fp"})
	if err != nil || len(recs) != 2 {
		t.Errorf("the submission under local finds its job: %v, %v", jobIDs(recs), err)
	}
	importAs(t, s, "other", noClusterDump)
	if s.oneCluster(ctx) {
		t.Error("jobs under two names")
	}
}

// The jobs linked to a script (Tracked: what the output scan reads) are
// each submission's jobs under its own cluster name, an array's tasks and
// a heterogeneous job's components included, as the join of jobs to
// submissions finds them: in a history of one cluster name and of two,
// where a job is linked under two names, or a submission names a task.
// With the fallback names a job filed under two came with either's
// submission, whichever came first.
func TestTrackedJobsAreTheSubmissionsOwn(t *testing.T) {
	ctx := context.Background()
	for _, multi := range []bool{false, true} {
		s := openTemp(t)
		h := "JobIDRaw|JobID|User|State|ReqTRES|JobName|Submit\n"
		importAs(t, s, "c1", h+
			"100|100_0|ann|COMPLETED|cpu=1|a|2026-01-01T00:00:00\n101|100_1|ann|COMPLETED|cpu=1|a|2026-01-01T00:00:00\n"+
			"200|200+0|ann|COMPLETED|cpu=1|h|2026-01-01T00:00:00\n201|200+1|ann|COMPLETED|cpu=1|h|2026-01-01T00:00:00\n"+
			"300|300|ann|COMPLETED|cpu=1|x|2026-01-01T00:00:00\n400|400|ann|COMPLETED|cpu=1|y|2026-01-01T00:00:00\n"+
			"500|500|ann|COMPLETED|cpu=1|z|2026-01-01T00:00:00\n")
		if multi {
			importAs(t, s, "c2", h+"900|900|bob|COMPLETED|cpu=1|q|2026-01-01T00:00:00\n")
		}
		exec := func(q string, a ...any) {
			t.Helper()
			if _, err := s.db.Exec(q, a...); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range []string{"fA", "fB", "fC", "fD", "fE"} {
			exec(`INSERT INTO scripts VALUES (?, '/x', 0, 0)`, f)
		}
		sub := func(cluster, id, fp string) {
			exec(`INSERT INTO submissions(cluster, job_id, fingerprint, script, profile, sweep_dir, workload, work_dir, stdout, stderr, submitted)
				VALUES (?, ?, ?, '/x', '', '', '', '', '', '', 0)`, cluster, id, fp)
		}
		sub("c1", "100", "fA")
		sub("c1", "200", "fB")
		sub("", "300", "fC") // the wrapper's, its cluster not yet known
		sub("c1", "500", "fE")
		sub("c1", "101", "fC") // a task's own id
		if multi {
			sub("local", "400", "fD")
			sub("local", "500", "fA")
		}
		// The join the output scan read before: every job, each looked up
		// among the submissions of its cluster.
		joined, err := s.recordsOnce(ctx, `SELECT `+s.readColumns()+` FROM jobs j
			LEFT JOIN submissions s ON s.cluster = j.cluster AND s.job_id = j.array_job
			LEFT JOIN outputs o ON o.cluster = j.cluster AND o.job_key = j.job_key WHERE s.job_id IS NOT NULL`+newestFirst, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 { // the same every time
			got, err := s.History(ctx, HistoryFilter{Tracked: true})
			if err != nil {
				t.Fatal(err)
			}
			if g, w := linkedKeys(got), linkedKeys(joined); !slices.Equal(g, w) {
				t.Errorf("two cluster names %v: tracked %v, want %v", multi, g, w)
			}
		}
	}
}

// linkedKeys are the records' jobs and the scripts they are linked to,
// sorted.
func linkedKeys(recs []JobRecord) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Cluster+"/"+r.Key+"("+r.Fingerprint+")")
	}
	slices.Sort(out)
	return out
}

// A job tracked under slurmctld's name, then again (another workload)
// where Slurm could not be asked: relinking keeps the newer submission
// only, so the job counts for one workload. Of two recorded at one time,
// both stay, unless MoveSubmissions names the one that replaces the other.
func TestRelinkKeepsTheNewerSubmissionOfAJob(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	importAs(t, s, "wulver", noClusterDump)
	first := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	sub := func(cluster, id, workload string, at time.Time) Submission {
		return Submission{Cluster: cluster, JobID: id, Fingerprint: "fp", Source: "/u/md.sh", Script: "/u/md.sh", Workload: workload, Submitted: at}
	}
	record := func(subs ...Submission) {
		t.Helper()
		if err := s.RecordSubmissions(ctx, subs); err != nil {
			t.Fatal(err)
		}
	}
	workloads := func() map[string]string {
		t.Helper()
		tr, err := s.Tracked(ctx, TrackedFilter{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, w := range []string{"md-generic", "gromacs"} {
			recs, err := s.History(ctx, HistoryFilter{Workload: w})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				out[r.JobID] += w + " "
			}
		}
		if len(tr) != len(out) {
			t.Errorf("tracked %+v for runs %v", tr, out)
		}
		return out
	}
	record(sub("wulver", "4242", "md-generic", first), sub("wulver", "4243", "md-generic", first))
	// 4242 again, later; 4243 again at the same time.
	record(sub("local", "4242", "gromacs", first.Add(time.Minute)), sub("local", "4243", "gromacs", first))
	if n, err := s.RelinkSubmissions(ctx); err != nil || n != 1 {
		t.Errorf("relinked %d, %v; want 1", n, err)
	}
	if got := workloads(); got["4242"] != "gromacs " {
		t.Errorf("after relinking, workloads of the runs %q", got)
	}
	if n, err := s.MoveSubmissions(ctx, "local", []string{"4243"}); err != nil || n != 1 {
		t.Errorf("moved %d, %v; want 1", n, err)
	}
	if got := workloads(); got["4242"] != "gromacs " || got["4243"] != "gromacs " {
		t.Errorf("after moving, workloads of the runs %q", got)
	}
	// An older one under another name gives way to the one there.
	record(sub("local", "4242", "md-generic", first))
	if n, err := s.RelinkSubmissions(ctx); err != nil || n != 0 {
		t.Errorf("relinked the older: %d, %v", n, err)
	}
	if got := workloads(); got["4242"] != "gromacs " || got["4243"] != "gromacs " {
		t.Errorf("after the older, workloads of the runs %q", got)
	}
	if ws, err := s.Workloads(ctx); err != nil || len(ws) != 1 || ws[0] != (WorkloadCount{Workload: "gromacs", Submissions: 2}) {
		t.Errorf("workloads %+v %v", ws, err)
	}
}
