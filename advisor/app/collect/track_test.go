package collect

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
)

func trackScript(t *testing.T) *slurm.Script {
	t.Helper()
	return slurm.Parse(filepath.Join(t.TempDir(), "train.sh"), []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\npython train.py\n"))
}

// A tracked id sacct and squeue do not know is said apart from one only
// not collected yet; a job slurmctld still shows keeps its submit time and
// output paths from scontrol.
func TestTrackSaysWhatSlurmLacks(t *testing.T) {
	ctx := context.Background()
	sl := newFakeSlurm(t)
	sl.file("cluster", "c1\n")
	sl.file("job-300", "JobId=300 JobName=train SubmitTime=2026-11-20T12:00:05 WorkDir=/w/my dir StdOut=/w/my dir/o-300.out StdErr=/w/e-300.err\n")
	sl.file("byid.psv", windowHeader+"300|300|ann|RUNNING|60||train\n")
	col := &Collector{Store: testCollector(t).Store, Slurm: sl.client()}
	tracked := time.Date(2026, 11, 21, 9, 0, 0, 0, time.Local)
	script := trackScript(t)
	res, err := Track(ctx, col, TrackRequest{Script: script, JobIDs: []string{"300", "301"}, Workload: "mnist",
		Now: func() time.Time { return tracked }, OnFallback: func(s string) { t.Errorf("fallback said %q", s) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Cluster != "c1" || res.Script != script.Path || res.Fingerprint != script.Fingerprint() || res.Ambiguous != nil || res.OutputUnread != nil {
		t.Errorf("result %+v", res)
	}
	if !slices.Equal(res.NotInHistory, []string{"300"}) || !slices.Equal(res.UnknownToSlurm, []string{"301"}) {
		t.Errorf("not in the history %q, unknown to Slurm %q", res.NotInHistory, res.UnknownToSlurm)
	}
	subs, err := col.Store.Tracked(ctx, history.TrackedFilter{JobIDs: []string{"300", "301"}})
	if err != nil || len(subs) != 2 {
		t.Fatalf("submissions %+v %v", subs, err)
	}
	for _, s := range subs {
		want := history.Submission{Cluster: "c1", JobID: s.JobID, Fingerprint: script.Fingerprint(), Script: script.Path,
			Workload: "mnist", Submitted: tracked}
		if s.JobID == "300" {
			want.Submitted = time.Date(2026, 11, 20, 12, 0, 5, 0, time.Local)
			want.WorkDir, want.Stdout, want.Stderr = "/w/my dir", "/w/my dir/o-300.out", "/w/e-300.err"
		}
		got := s.Submission
		got.Source = ""
		if !got.Submitted.Equal(want.Submitted) {
			t.Errorf("job %s submitted %v, want %v", s.JobID, got.Submitted, want.Submitted)
		}
		got.Submitted = want.Submitted
		if got != want {
			t.Errorf("submission\n%+v, want\n%+v", got, want)
		}
	}
}

// An id the history holds under two cluster names as different jobs is
// ambiguous (it counts as the named cluster's); one it holds under "local"
// only is linked there; where Slurm cannot be asked, the fallback is said.
func TestTrackAmbiguousAndFallbackJobs(t *testing.T) {
	ctx := context.Background()
	sl := newFakeSlurm(t)
	col := testCollector(t)
	col.Cluster = FallbackCluster
	// 400's records apart: the reader folds adjacent lines of one id into one job.
	dump := "JobIDRaw|JobID|Cluster|State|Submit|ElapsedRaw|JobName\n" +
		"400|400|a|COMPLETED|2026-11-01T10:00:00|60|x\n401|401||COMPLETED|2026-11-03T10:00:00|60|z\n" +
		"400|400|b|COMPLETED|2026-11-02T10:00:00|60|y\n"
	if _, err := col.ImportDump(ctx, strings.NewReader(dump)); err != nil {
		t.Fatal(err)
	}
	track := &Collector{Store: col.Store, Slurm: sl.client()}
	res, err := Track(ctx, track, TrackRequest{Script: trackScript(t), JobIDs: []string{"400", "401"}, Cluster: "a"})
	if err != nil {
		t.Fatal(err)
	}
	want := AmbiguousJob{Clusters: []string{"a", "b"}, LinkedTo: "a"}
	if a := res.Ambiguous["400"]; len(res.Ambiguous) != 1 || !slices.Equal(a.Clusters, want.Clusters) || a.LinkedTo != want.LinkedTo {
		t.Errorf("ambiguous %+v", res.Ambiguous)
	}
	if len(res.NotInHistory) != 0 || len(res.UnknownToSlurm) != 0 {
		t.Errorf("not in the history %q, unknown to Slurm %q", res.NotInHistory, res.UnknownToSlurm)
	}
	for _, c := range sl.calls() {
		if strings.HasPrefix(c, "sacct") || strings.HasPrefix(c, "squeue") {
			t.Errorf("every job is in the history, yet %q", c)
		}
	}

	var said []string
	res, err = Track(ctx, track, TrackRequest{Script: trackScript(t), JobIDs: []string{"401"}, OnFallback: func(s string) { said = append(said, s) }})
	if err != nil || res.Cluster != "a" || len(said) != 1 || !strings.Contains(said[0], "the name this history last used") {
		t.Errorf("Slurm away: %+v %v, said %q", res, err, said)
	}
}

// Only the ids sbatch prints are tracked (an array's first part): an
// array task, a job step or an id with its cluster (sbatch --parsable's
// "id;cluster") is refused.
func TestCheckJobIDs(t *testing.T) {
	for _, c := range []struct {
		ids  []string
		want string // "" for none refused
	}{
		{[]string{"300", "301"}, ""},
		{[]string{"300_1"}, `"300_1" is not a job id`},
		{[]string{"300", "x1"}, `"x1" is not a job id`},
		{[]string{"300;migdev"}, `"300;migdev" is not a job id`},
		{[]string{"300.batch"}, `"300.batch" is not a job id`},
	} {
		err := CheckJobIDs(c.ids)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.ids, err, c.want)
		}
	}
}

// TrackScript reads the script before it opens the history: a script that
// cannot be read creates no history; one that can is tracked in it.
func TestTrackScript(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	script := filepath.Join(dir, "train.sh")
	if err := os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\npython train.py\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, script string
		tracked      bool
	}{
		{"no such script", filepath.Join(dir, "missing.sh"), false},
		{"a script", script, true},
	} {
		db := filepath.Join(t.TempDir(), "history.db")
		res, err := TrackScript(ctx, db, c.script, nil, TrackRequest{JobIDs: []string{"500"}, Cluster: "c1"})
		if _, statErr := os.Stat(db); (err == nil) != c.tracked || (statErr == nil) != c.tracked {
			t.Fatalf("%s: %v; the history: %v", c.name, err, statErr)
		}
		if c.tracked && (res.Script != script || res.Cluster != "c1" || !slices.Equal(res.JobIDs, []string{"500"})) {
			t.Errorf("%s: %+v", c.name, res)
		}
	}
}

// Tracking jobs again moves them to the new workload even where Slurm
// cannot be asked: the jobs are under the dump's cluster name, the tracked
// submissions first under "local", then moved there in place of the earlier
// ones, so that the jobs count for the new workload only. The two tracks
// are at one time (within a second, as the history keeps it).
func TestTrackAgainMovesJobsFiledUnderAnotherName(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	col.Cluster = ""
	dump := "JobIDRaw|JobID|Cluster|State|Submit|ElapsedRaw|JobName\n" +
		"500|500|wulver|COMPLETED|2026-11-01T10:00:00|60|md\n501|501|wulver|COMPLETED|2026-11-02T10:00:00|60|md\n"
	if _, err := col.ImportDump(ctx, strings.NewReader(dump)); err != nil {
		t.Fatal(err)
	}
	ids := []string{"500", "501"}
	at := time.Date(2026, 11, 21, 9, 0, 0, 0, time.Local)
	for _, w := range []string{"md-generic", "gromacs_performance"} {
		track := &Collector{Store: col.Store, Slurm: newFakeSlurm(t).client()}
		res, err := Track(ctx, track, TrackRequest{Script: trackScript(t), JobIDs: ids, Workload: w,
			Now: func() time.Time { return at }, OnFallback: func(string) {}})
		if err != nil || res.Cluster != FallbackCluster {
			t.Fatalf("track as %s: %+v %v", w, res, err)
		}
	}
	tr, err := col.Store.Tracked(ctx, history.TrackedFilter{JobIDs: ids})
	if err != nil || len(tr) != 2 {
		t.Fatalf("tracked %+v %v", tr, err)
	}
	for _, s := range tr {
		if s.Cluster != "wulver" || s.Workload != "gromacs_performance" || len(s.Jobs) != 1 {
			t.Errorf("job %s: %+v", s.JobID, s)
		}
	}
	for w, want := range map[string]int{"md-generic": 0, "gromacs_performance": 2} {
		recs, err := col.Store.History(ctx, history.HistoryFilter{Workload: w})
		if err != nil || len(recs) != want {
			t.Errorf("runs of %s: %d %v, want %d", w, len(recs), err, want)
		}
	}
	if ws, err := col.Store.Workloads(ctx); err != nil || len(ws) != 1 || ws[0] != (history.WorkloadCount{Workload: "gromacs_performance", Submissions: 2}) {
		t.Errorf("workloads %+v %v", ws, err)
	}
}
