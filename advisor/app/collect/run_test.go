package collect

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// fakeSlurm is a directory of Slurm commands that log each call (a line
// "name args") and answer from files beside them:
//   - scontrol show config: "ClusterName = " and the file cluster, or fails
//     as an unreachable slurmctld does when there is none;
//   - scontrol show job ID: the file job-ID, or fails as for a forgotten job;
//   - sacct --jobs=...: byid.psv; sacct --batch-script: nothing; else window.psv;
//   - squeue: the file queue (none: an empty queue).
type fakeSlurm struct {
	t   *testing.T
	dir string
}

func newFakeSlurm(t *testing.T) *fakeSlurm {
	t.Helper()
	f := &fakeSlurm{t: t, dir: t.TempDir()}
	f.command("scontrol", `case "$*" in
*"show config"*) [ -e "$d/cluster" ] || { echo "slurm_load_ctl_conf error: Unable to contact slurm controller" >&2; exit 1; }
  echo "ClusterName = $(cat "$d/cluster")" ;;
*"show job"*) for id; do :; done
  [ -e "$d/job-$id" ] || { echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1; }
  cat "$d/job-$id" ;;
esac`)
	f.command("sacct", `case "$*" in
*--batch-script*) `+fakeBatchScripts+` ;;
*--jobs=*) cat "$d/byid.psv" 2>/dev/null ;;
*) cat "$d/window.psv" ;;
esac`)
	f.command("squeue", `cat "$d/queue" 2>/dev/null; true`)
	return f
}

// fakeBatchScripts answers sacct --batch-script -j ID,... as the dev
// cluster's slurmdbd does for jobs it stored no script of: each job's
// header and NONE; but for the ids in the file hidden, which it shows
// nothing of (another user's job, to a user who may not see it).
const fakeBatchScripts = `for ids; do :; done; IFS=,; for id in $ids; do
  grep -qx "$id" "$d/hidden" 2>/dev/null && continue
  printf 'Batch Script for %s\n%s\nNONE\n\n' "$id" --------------------------------------------------------------------------------
done`

func (f *fakeSlurm) command(name, body string) {
	f.t.Helper()
	script := "#!/bin/sh\nd=$(dirname \"$0\")\necho \"" + name + " $*\" >> \"$d/calls\"\n" + body + "\n"
	write(f.t, filepath.Join(f.dir, name), script)
	if err := os.Chmod(filepath.Join(f.dir, name), 0o755); err != nil {
		f.t.Fatal(err)
	}
}

// file writes one of the files the commands answer from.
func (f *fakeSlurm) file(name, text string) {
	f.t.Helper()
	write(f.t, filepath.Join(f.dir, name), text)
}

func (f *fakeSlurm) client() *slurm.Client { return &slurm.Client{Bin: f.dir} }

// calls returns the calls made since the last, and forgets them.
func (f *fakeSlurm) calls() []string {
	data, _ := os.ReadFile(filepath.Join(f.dir, "calls"))
	os.Remove(filepath.Join(f.dir, "calls"))
	if len(data) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// runCollector is a collector as collect opens it: the cluster as given
// (none) and "local" the fallback name.
func runCollector(t *testing.T, sl *fakeSlurm) *Collector {
	col := testCollector(t)
	col.Cluster, col.Fallbacks, col.Slurm = "", []string{FallbackCluster}, sl.client()
	return col
}

// clustersOf maps each job key in the history to the cluster it is filed under.
func clustersOf(t *testing.T, st *history.Store) map[string]string {
	t.Helper()
	recs, err := st.History(context.Background(), history.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range recs {
		out[r.Key] = r.Cluster
	}
	return out
}

// A dump without a Cluster column takes the name Slurm cannot give: the
// fallback, said; one with the column keeps its names and asks Slurm
// nothing; one that is not a dump fails before any name is chosen.
func TestRunDumpNamesTheClusterOnlyWhereTheDumpHasNone(t *testing.T) {
	ctx := context.Background()
	sl := newFakeSlurm(t)
	col := runCollector(t, sl)
	dir := t.TempDir()
	write(t, filepath.Join(dir, "plain.psv"), "JobIDRaw|JobID|State|ElapsedRaw|JobName\n10|10|COMPLETED|60|a\nnot|a|record\n")
	var fallbacks, accounted []string
	opt := RunOptions{Selection: Selection{Dump: filepath.Join(dir, "plain.psv")},
		OnFallback:  func(s string) { fallbacks = append(fallbacks, s) },
		OnAccounted: func(r Report) { accounted = append(accounted, r.Source) }}
	rep, err := Run(ctx, col, opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Source != opt.Selection.Dump || rep.Accounting.New != 1 || rep.Accounting.SkippedTotal != 1 || rep.Window != nil {
		t.Errorf("report %+v", rep)
	}
	if len(fallbacks) != 1 || !strings.Contains(fallbacks[0], `filing the jobs under cluster "local"`) {
		t.Errorf("fallback said %q", fallbacks)
	}
	if !slices.Equal(accounted, []string{opt.Selection.Dump}) {
		t.Errorf("accounting heard %q", accounted)
	}
	if err := rep.Accounting.Err(true); err == nil || err.Error() != "1 record skipped (--strict)" {
		t.Errorf("strict: %v", err)
	}
	if c := clustersOf(t, col.Store)["10"]; c != FallbackCluster {
		t.Errorf("job 10 filed under %q", c)
	}

	sl.calls()
	fallbacks = nil
	write(t, filepath.Join(dir, "clusters.psv"), "JobIDRaw|JobID|Cluster|State|JobName\n11|11|wulver|COMPLETED|b\n")
	opt.Selection.Dump = filepath.Join(dir, "clusters.psv")
	if _, err := Run(ctx, col, opt); err != nil {
		t.Fatal(err)
	}
	if c := sl.calls(); len(c) != 0 || len(fallbacks) != 0 {
		t.Errorf("a dump with its clusters asked Slurm %q, said %q", c, fallbacks)
	}
	if c := clustersOf(t, col.Store)["11"]; c != "wulver" {
		t.Errorf("job 11 filed under %q", c)
	}

	write(t, filepath.Join(dir, "notes.txt"), "my notes\n")
	opt.Selection.Dump = filepath.Join(dir, "notes.txt")
	_, err = Run(ctx, col, opt)
	if err == nil || !strings.HasPrefix(err.Error(), opt.Selection.Dump+":1: the first line is not a sacct header") {
		t.Errorf("not a dump: %v", err)
	}
	if c := sl.calls(); len(c) != 0 {
		t.Errorf("not a dump, yet Slurm was asked %q", c)
	}
}

// An empty dump on stdin imports nothing, and names no cluster: Slurm is
// not asked for one.
func TestRunEmptyDumpOnStdin(t *testing.T) {
	sl := newFakeSlurm(t)
	sl.file("cluster", "wulver\n")
	col := runCollector(t, sl)
	var fellBack []string
	rep, err := Run(context.Background(), col, RunOptions{Selection: Selection{Dump: "-"}, Stdin: strings.NewReader("\n"),
		OnFallback: func(s string) { fellBack = append(fellBack, s) }})
	if err != nil || rep.Source != "-" || rep.Accounting.Total() != 0 || col.Cluster != "" || len(fellBack) != 0 {
		t.Fatalf("%+v %v (cluster %q, %q)", rep, err, col.Cluster, fellBack)
	}
	if c := sl.calls(); len(c) != 0 {
		t.Errorf("an empty dump, yet Slurm was asked %q", c)
	}
	if err := rep.Accounting.Err(true); err != nil {
		t.Errorf("an empty dump failed: %v", err)
	}
}

// runDevDump runs a collect of the dev cluster's dump, changed by edit.
func runDevDump(t *testing.T, edit func(dump string) string) Report {
	t.Helper()
	dump, err := os.ReadFile("../../../testdata/sacct/devcluster-22.05.psv")
	if err != nil {
		t.Fatal(err)
	}
	col := runCollector(t, newFakeSlurm(t))
	rep, err := Run(context.Background(), col, RunOptions{Selection: Selection{Dump: "-"}, Stdin: strings.NewReader(edit(string(dump)))})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A dump without End and User is said to lack them.
func TestRunSaysWhatADumpLacks(t *testing.T) {
	rep := runDevDump(t, func(dump string) string { return sacctgen.WithoutFields(dump, "End", "User") })
	var lacked []string
	for _, l := range rep.Accounting.Lacks {
		lacked = append(lacked, l.Fields...)
	}
	if !slices.Equal(lacked, []string{"End", "User"}) {
		t.Errorf("the dump lacks %v, want End and User", lacked)
	}
}

// A job whose own record is skipped (a damaged line) is not counted as
// read through its steps, which the history cannot file without it.
func TestRunCountsTheJobsWhoseRecordsWereRead(t *testing.T) {
	rep := runDevDump(t, func(dump string) string {
		return strings.Replace(dump, "\n1|1|migdev|root|abc123|gpu|standard|OUT_OF_MEMORY|0:125|", "\n1|1|migdev|root|abc123|gpu|standard|OUT_OF_MEMORY|oops|", 1)
	})
	if acct := rep.Accounting; acct.Total() != 13 || acct.New != 13 || acct.Partial != 1 || acct.SkippedTotal != 1 {
		t.Errorf("jobs read %d (%+v), want 13 new and job 1's steps alone", acct.Total(), acct.ImportStats)
	}
}

// Without a selection, sacct is asked by id (every user's) about the
// tracked jobs that have not ended; an id neither it nor squeue knows is
// reported. With none waiting, Slurm is asked nothing about jobs.
func TestRunTrackedJobs(t *testing.T) {
	ctx := context.Background()
	sl := newFakeSlurm(t)
	sl.file("cluster", "c1\n")
	col := runCollector(t, sl)
	rep, err := Run(ctx, col, RunOptions{})
	if err != nil || rep.Source != SourceNone || rep.Window != nil {
		t.Fatalf("nothing tracked: %+v %v", rep, err)
	}
	for _, c := range sl.calls() {
		if strings.HasPrefix(c, "sacct") {
			t.Errorf("nothing tracked, yet %q", c)
		}
	}

	subs := []history.Submission{{Cluster: "c1", JobID: "200", Fingerprint: "f", Source: "/s.sh", Script: "/s.sh", Submitted: time.Now()},
		{Cluster: "c1", JobID: "201", Fingerprint: "f", Source: "/s.sh", Script: "/s.sh", Submitted: time.Now()}}
	if err := col.Store.RecordSubmissions(ctx, subs); err != nil {
		t.Fatal(err)
	}
	sl.file("byid.psv", windowHeader+"200|200|ann|COMPLETED|60||train\n")
	rep, err = Run(ctx, col, RunOptions{})
	if err != nil || rep.Source != SourceSacct || rep.Accounting.New != 1 || !slices.Equal(rep.UnknownToSlurm, []string{"201"}) {
		t.Fatalf("tracked: %+v %v", rep, err)
	}
	var sacct []string
	for _, c := range sl.calls() {
		if strings.HasPrefix(c, "sacct") {
			sacct = append(sacct, c)
		}
	}
	if len(sacct) != 1 || !strings.Contains(sacct[0], "--jobs=200,201") || !strings.Contains(sacct[0], "--allusers") {
		t.Errorf("sacct calls %q", sacct)
	}
}

// A selection by time reads a window of sacct, and a site-wide one links
// the GPU jobs to slurmdbd's scripts (here it has none).
func TestRunWindow(t *testing.T) {
	sl := newFakeSlurm(t)
	sl.file("cluster", "c1\n")
	sl.file("window.psv", windowHeader+"300|300|ann|COMPLETED|60|gres/gpu:a100_10g=1|train\n301|301|bob|FAILED|5||prep\n")
	col := runCollector(t, sl)
	q := slurm.SacctQuery{AllUsers: true, Since: time.Now().Add(-time.Hour)}
	rep, err := Run(context.Background(), col, RunOptions{Selection: NewSelection("", q, nil, "ann")})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Source != SourceSacct || rep.Accounting.New != 2 || rep.Window == nil || rep.Window.Watermark.IsZero() {
		t.Errorf("report %+v", rep)
	}
	if rep.Scripts == nil || rep.Scripts.Linked != 0 || rep.Scripts.Missing != 1 {
		t.Errorf("scripts %+v", rep.Scripts)
	}
	if c := clustersOf(t, col.Store)["300"]; c != "c1" {
		t.Errorf("job 300 filed under %q", c)
	}
}

var sliceCompute = regexp.MustCompile(`(\d+g)\.\d+gb`)

// A dump in jobstats' fields (testdata/spellings: epoch times, no Elapsed,
// GPU types as AutoDetect=nvml and hand-written gres.conf files spell
// them) is priced on Wulver's profiles: every job on an A100 slice or a
// whole A100 has its profile, its time from Start and End, and an SU
// figure; the two on an H100 slice are counted by their type; and of five
// jobstats summaries, the one that held GPU figures is counted as such.
func TestRunPlacesGPUTypesAsSitesSpellThem(t *testing.T) {
	ctx := context.Background()
	col := runCollector(t, newFakeSlurm(t))
	dump := filepath.Join("testdata", "spellings", "jobstats-format.psv")
	rep, err := Run(ctx, col, RunOptions{Selection: Selection{Dump: dump}})
	if err != nil {
		t.Fatal(err)
	}
	acct := rep.Accounting
	if acct.New != 11 || acct.Jobstats != 5 || acct.JobstatsGPU != 1 {
		t.Errorf("imported %d jobs, %d summaries, %d with GPU figures; want 11, 5, 1", acct.New, acct.Jobstats, acct.JobstatsGPU)
	}
	if got := acct.UnplacedTypes(); !slices.Equal(got, []GPUTypeJobs{{"nvidia_h100_1g.10gb", 2}}) {
		t.Errorf("unplaced: %v", got)
	}
	recs, err := col.Store.History(ctx, history.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		r := &recs[i]
		_, priced := advisor.RecordCharge(col.Site, r)
		h100 := strings.Contains(r.GPUType, "h100")
		switch {
		case r.ElapsedS == nil:
			t.Errorf("job %s: no elapsed time", r.JobID)
		case h100:
			if r.Profile != "" || priced {
				t.Errorf("job %s on %s: profile %q, priced %v", r.JobID, r.GPUType, r.Profile, priced)
			}
		case !priced:
			t.Errorf("job %s on %q (profile %q): no SU", r.JobID, r.GPUType, r.Profile)
		case r.GPUType != "":
			// A slice's compute is in its name (3g.39gb: 3g); a type without
			// one is a whole GPU.
			want := catalog.FullGPU
			if m := sliceCompute.FindStringSubmatch(strings.ToLower(r.GPUType)); m != nil {
				want = m[1]
			}
			if p, ok := col.Site.Profile(r.Profile); !ok || want == catalog.FullGPU && p.Slice != want || want != catalog.FullGPU && !strings.HasPrefix(p.Slice, want+".") {
				t.Errorf("job %s on %s placed on %q", r.JobID, r.GPUType, r.Profile)
			}
		}
		if r.JobID == "7001" && (r.ElapsedS == nil || *r.ElapsedS != 14*3600 || r.Profile != catalog.FullGPU) {
			t.Errorf("the 14-hour job: %+v", r)
		}
	}
}

// Of the GPU jobs slurmdbd has no script for, a site-wide collect tells
// the batch jobs (a batch step in accounting: AccountingStoreFlags unset,
// or set after they ran) from the salloc and srun allocations (none: they
// never have a script) and from the jobs that never started (no script is
// stored before a job starts).
func TestRunTellsWhyJobsHaveNoScript(t *testing.T) {
	sl := newFakeSlurm(t)
	sl.file("cluster", "c1\n")
	sl.file("window.psv", windowHeader+"300|300|ann|COMPLETED|60|gres/gpu:a100_10g=1|train\n"+
		"301|301|bob|COMPLETED|600|gres/gpu:a100_10g=1|interactive\n"+
		"302|302|bob|CANCELLED|0|gres/gpu:a100_10g=1|train\n")
	sl.command("sacct", `case "$*" in
*--batch-script*) `+fakeBatchScripts+` ;;
*"--format=JobIDRaw --jobs="*) printf '300\n300.batch\n300.extern\n301\n301.extern\n301.interactive\n' ;;
*) cat "$d/window.psv" ;;
esac`)
	col := runCollector(t, sl)
	q := slurm.SacctQuery{AllUsers: true, Since: time.Now().Add(-time.Hour)}
	rep, err := Run(context.Background(), col, RunOptions{Selection: NewSelection("", q, nil, "ann")})
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Scripts; s == nil || *s != (ScriptsResult{Missing: 1, Allocations: 1, NeverStarted: 1}) {
		t.Fatalf("scripts %+v", s)
	}
	var text strings.Builder
	SummaryOf(SessionReport{Report: rep}).WriteText(&text)
	if want := "scripts: 0 jobs linked from slurmdbd, 1 batch job without a stored script (AccountingStoreFlags=job_script?); " +
		"1 salloc or srun allocation, which has no batch script; 1 job that never started, whose script slurmdbd does not store\n"; !strings.Contains(text.String(), want) {
		t.Errorf("summary:\n%s\nwant %q", text.String(), want)
	}
}

// A job sacct --batch-script says nothing of, not even NONE, is no job
// slurmdbd stored no script for: it did not show it (another user's, to
// someone neither root, SlurmUser, an operator nor the account's
// coordinator; or one it no longer holds). The summary says so, not
// "AccountingStoreFlags=job_script?", and the job is asked for once, as
// the others are: the next collect reaches older jobs.
func TestRunTellsUnshownJobsFromJobsWithNoScript(t *testing.T) {
	sl := newFakeSlurm(t)
	sl.file("cluster", "c1\n")
	sl.file("window.psv", windowHeader+"300|300|ann|COMPLETED|60|gres/gpu:a100_10g=1|train\n"+
		"301|301|bob|COMPLETED|600|gres/gpu:a100_10g=1|train\n"+
		"302|302|cy|COMPLETED|600|gres/gpu:a100_10g=1|train\n")
	sl.file("hidden", "301\n302\n")
	sl.command("sacct", `case "$*" in
*--batch-script*) `+fakeBatchScripts+` ;;
*"--format=JobIDRaw --jobs="*) printf '300\n300.batch\n301\n301.batch\n302\n302.batch\n' ;;
*) cat "$d/window.psv" ;;
esac`)
	col := runCollector(t, sl)
	q := slurm.SacctQuery{AllUsers: true, Since: time.Now().Add(-time.Hour)}
	rep, err := Run(context.Background(), col, RunOptions{Selection: NewSelection("", q, nil, "ann")})
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Scripts; s == nil || *s != (ScriptsResult{Missing: 1, Unshown: 2}) {
		t.Fatalf("scripts %+v", s)
	}
	var text strings.Builder
	SummaryOf(SessionReport{Report: rep}).WriteText(&text)
	if want := "1 batch job without a stored script (AccountingStoreFlags=job_script?), 2 jobs sacct --batch-script said nothing of: " +
		"slurmdbd shows another user's script only to root, SlurmUser, Slurm's operators and the account's coordinators, " +
		"and none of a job it no longer holds"; !strings.Contains(text.String(), want) {
		t.Errorf("summary:\n%s\nwant %q", text.String(), want)
	}
	if again, err := col.LinkScripts(context.Background(), 100); err != nil || again != (ScriptsResult{}) {
		t.Errorf("the next collect asked again: %+v, %v", again, err)
	}
}

// A dump whose jobs' own records were all skipped, but whose steps were
// read, says so: "no record could be imported" was said beside the
// steps' usage it wrote.
func TestImportErrSaysTheStepsItRead(t *testing.T) {
	stepsAlone := ImportResult{SkippedTotal: 2}
	stepsAlone.Partial = 3
	if err := stepsAlone.Err(false); err == nil || !strings.Contains(err.Error(), "the steps of 3 jobs read without it") {
		t.Errorf("%v", err)
	}
	if err := (ImportResult{SkippedTotal: 2}).Err(false); err == nil || err.Error() != "no record could be imported (2 skipped)" {
		t.Errorf("%v", err)
	}
}
