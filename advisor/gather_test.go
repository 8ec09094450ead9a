package advisor

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
)

// trainDump: alice's runs of train.sh (4 CPUs, 16G) and bob's of his own
// train.sh, as sacct names them.
const trainDump = `JobIDRaw|JobID|Cluster|User|State|ExitCode|Submit|Start|End|ElapsedRaw|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName
11|11|migdev|alice|COMPLETED|0:0|2026-11-20T01:00:00|2026-11-20T01:00:05|2026-11-20T01:01:05|60|1|4|16G|cpu=4,gres/gpu:a100_10g=1,gres/gpu=1,mem=16G,node=1|train.sh
12|12|migdev|alice|FAILED|1:0|2026-11-20T02:00:00|2026-11-20T02:00:05|2026-11-20T02:01:05|60|1|4|16G|cpu=4,gres/gpu:a100_20g=1,gres/gpu=1,mem=16G,node=1|train.sh
13|13|migdev|bob|COMPLETED|0:0|2026-11-20T03:00:00|2026-11-20T03:00:05|2026-11-20T03:01:05|60|1|4|16G|cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1|train.sh
14|14|migdev|alice|COMPLETED|0:0|2026-11-20T04:00:00|2026-11-20T04:00:05|2026-11-20T04:01:05|60|1|4|16G|cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1|train.sh
`

const trainV1 = "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --cpus-per-task=4 --mem=16G\npython train.py --epochs 2\n"

// The user edits the script they ran (--epochs 2 to 3): its runs, tracked
// under the old fingerprint at the same path, are still its evidence,
// marked as an earlier version's, and a note says so.
func TestGatherFindsTheRunsOfAnEditedScript(t *testing.T) {
	ctx := context.Background()
	site, _ := catalog.Builtin("wulver")
	st := historytest.FromDump(t, site, trainDump)
	path := filepath.Join(t.TempDir(), "train.sh")
	v1 := catalogtest.WriteScript(t, path, trainV1)
	var subs []history.Submission
	for _, id := range []string{"11", "12"} {
		subs = append(subs, history.Submission{Cluster: "migdev", JobID: id, Fingerprint: v1.Fingerprint(), Source: path, Script: path, Submitted: time.Now()})
	}
	if err := st.RecordSubmissions(ctx, subs); err != nil {
		t.Fatal(err)
	}
	v2 := catalogtest.WriteScript(t, path, strings.Replace(trainV1, "--epochs 2", "--epochs 3", 1))
	if v2.Fingerprint() == v1.Fingerprint() {
		t.Fatal("the edit kept the fingerprint")
	}
	job, err := GatherFor(ctx, site, GatherRequest{Path: path, Script: v2, WaitsSince: time.Unix(0, 0)}, st)
	if err != nil {
		t.Fatal(err)
	}
	// Job 14 has the same name and resources but no script: not a version of this one.
	if len(job.Runs) != 2 {
		t.Fatalf("runs %+v", job.Runs)
	}
	for _, r := range job.Runs {
		if !r.Earlier || r.EarlierBy != history.EarlierByPath {
			t.Errorf("run %s: earlier %v by %q", r.JobID, r.Earlier, r.EarlierBy)
		}
	}
	if want := "no runs of this exact script; 2 runs of an earlier version (the same path) are used"; len(job.Notes) != 1 || job.Notes[0] != want {
		t.Errorf("notes %q, want %q", job.Notes, want)
	}

	// Once the new version has a run, it is the evidence: the old ones are not read.
	if err := st.RecordSubmissions(ctx, []history.Submission{{Cluster: "migdev", JobID: "14", Fingerprint: v2.Fingerprint(), Source: path, Script: path, Submitted: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	job, _ = GatherFor(ctx, site, GatherRequest{Path: path, Script: v2, WaitsSince: time.Unix(0, 0)}, st)
	if len(job.Runs) != 1 || job.Runs[0].JobID != "14" || job.Runs[0].Earlier || len(job.Notes) != 0 {
		t.Errorf("runs %+v, notes %q", job.Runs, job.Notes)
	}
}

// In a site-wide history (jobs linked to slurmdbd's copies of their
// scripts), the runs of the user's earlier version are found by the job
// name, CPUs and memory; another user's script of the same name is not a
// version of theirs. A runs list never has a job twice.
func TestGatherFindsEarlierVersionsByNameInTheSiteHistory(t *testing.T) {
	ctx := context.Background()
	site, _ := catalog.Builtin("wulver")
	siteWide := historytest.FromDump(t, site, trainDump)
	var subs []history.Submission
	for _, id := range []string{"11", "12", "13"} {
		src := "sacct:migdev/" + id
		subs = append(subs, history.Submission{Cluster: "migdev", JobID: id, Fingerprint: "slurmdbd-copy", Source: src, Script: src, Submitted: time.Now()})
	}
	if err := siteWide.RecordSubmissions(ctx, subs); err != nil {
		t.Fatal(err)
	}
	own := historytest.FromDump(t, site, trainDump) // the same jobs in the user's own history, not linked there
	path := filepath.Join(t.TempDir(), "train.sh")
	edited := catalogtest.WriteScript(t, path, strings.Replace(trainV1, "--epochs 2", "--epochs 3", 1))
	job, err := GatherFor(ctx, site, GatherRequest{Path: path, Script: edited, User: "alice"}, own, siteWide)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range job.Runs {
		ids = append(ids, r.JobID)
		if !r.Earlier || r.EarlierBy != history.EarlierByName {
			t.Errorf("run %s: earlier %v by %q", r.JobID, r.Earlier, r.EarlierBy)
		}
	}
	if strings.Join(ids, " ") != "12 11" {
		t.Errorf("runs of jobs %v, want alice's 12 and 11", ids)
	}
	if len(job.Notes) != 1 || !strings.Contains(job.Notes[0], "2 runs of an earlier version (the same job name and resources)") {
		t.Errorf("notes %q", job.Notes)
	}
	// A script asking for other resources is another script.
	other := catalogtest.WriteScript(t, path, strings.Replace(trainV1, "--mem=16G", "--mem=32G", 1))
	if job, _ := GatherFor(ctx, site, GatherRequest{Path: path, Script: other, User: "alice"}, own, siteWide); len(job.Runs) != 0 {
		t.Errorf("runs of a script asking for 32G: %+v", job.Runs)
	}
}

// Tracked jobs that accounting has not given the history yet are why a
// script has no runs: the notes say so, and what to run.
func TestGatherSaysWhichTrackedJobsAreNotCollected(t *testing.T) {
	ctx := context.Background()
	site, _ := catalog.Builtin("wulver")
	st := historytest.FromDump(t, site, trainDump)
	path := filepath.Join(t.TempDir(), "new.sh")
	s := catalogtest.WriteScript(t, path, "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\npython new.py\n")
	var subs []history.Submission
	for _, id := range []string{"4242", "4243"} {
		subs = append(subs, history.Submission{Cluster: "migdev", JobID: id, Fingerprint: s.Fingerprint(), Source: path, Script: path, Submitted: time.Now()})
	}
	if err := st.RecordSubmissions(ctx, subs); err != nil {
		t.Fatal(err)
	}
	job, err := GatherFor(ctx, site, GatherRequest{Path: path, Script: s, WaitsSince: time.Unix(0, 0)}, st)
	if err != nil {
		t.Fatal(err)
	}
	want := "2 tracked jobs of this script (4242, 4243) have no final accounting record in the history yet: run 'migadvisor collect' after they end"
	if len(job.Runs) != 0 || len(job.Notes) != 1 || job.Notes[0] != want {
		t.Errorf("runs %d, notes %q", len(job.Runs), job.Notes)
	}
}

// A dump collected before anything tracked its jobs: the script has no
// runs, but the history is not silent about the jobs of its name; the note
// names them, newest first, with the command that links them.
func TestGatherNamesTheUnlinkedJobsOfTheScriptsName(t *testing.T) {
	ctx := context.Background()
	site, _ := catalog.Builtin("wulver")
	st := historytest.FromDump(t, site, trainDump)
	path := filepath.Join(t.TempDir(), "train.sh")
	s := catalogtest.WriteScript(t, path, trainV1)
	job, err := GatherFor(ctx, site, GatherRequest{Path: path, Script: s, WaitsSince: time.Unix(0, 0)}, st)
	if err != nil {
		t.Fatal(err)
	}
	want := "4 jobs named train.sh like this script's jobs are in the history but linked to no script; if they ran this script: migadvisor track " + path + " 14 13 12 11"
	if len(job.Runs) != 0 || len(job.Notes) != 1 || job.Notes[0] != want {
		t.Errorf("runs %d, notes %q", len(job.Runs), job.Notes)
	}
	// Once tracked, they are its runs and the note goes.
	var subs []history.Submission
	for _, id := range []string{"11", "12", "14"} {
		subs = append(subs, history.Submission{Cluster: "migdev", JobID: id, Fingerprint: s.Fingerprint(), Source: path, Script: path, Submitted: time.Now()})
	}
	if err := st.RecordSubmissions(ctx, subs); err != nil {
		t.Fatal(err)
	}
	if job, err = GatherFor(ctx, site, GatherRequest{Path: path, Script: s, WaitsSince: time.Unix(0, 0)}, st); err != nil || len(job.Runs) != 3 || len(job.Notes) != 0 {
		t.Errorf("after track: %d runs, notes %q, %v", len(job.Runs), job.Notes, err)
	}
	// Another name: nothing to say.
	other := filepath.Join(t.TempDir(), "other.sh")
	otherScript := catalogtest.WriteScript(t, other, strings.Replace(trainV1, "train.py", "other.py", 1))
	if job, err := GatherFor(ctx, site, GatherRequest{Path: other, Script: otherScript, WaitsSince: time.Unix(0, 0)}, st); err != nil || len(job.Runs) != 0 || len(job.Notes) != 0 {
		t.Errorf("another name: notes %q, %v", job.Notes, err)
	}
}

// A user with no history of their own yet reads the site-wide one alone.
func TestHistoryWithoutTheUsersOwn(t *testing.T) {
	site := catalogtest.Wulver(t)
	siteWide := historytest.FromDump(t, site, trainDump)
	recs, err := History(context.Background(), nil, 0, nil, siteWide)
	if err != nil || len(recs) != 4 || !recs[0].SiteWide {
		t.Fatalf("%d records, %v", len(recs), err)
	}
}

// twinDump: two jobs named twin with the same resources, of ok.sh and
// fail.sh, two scripts in one directory.
const twinDump = `JobIDRaw|JobID|Cluster|User|State|ExitCode|Submit|Start|End|ElapsedRaw|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName
21|21|migdev|alice|COMPLETED|0:0|2026-11-20T01:00:00|2026-11-20T01:00:05|2026-11-20T01:01:05|60|1|4|16G|cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1|twin
22|22|migdev|alice|FAILED|1:0|2026-11-20T01:00:00|2026-11-20T01:00:05|2026-11-20T01:01:05|60|1|4|16G|cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1|twin
`

const twinScript = "#!/bin/bash\n#SBATCH -J twin\n#SBATCH --gres=gpu:a100:1\n#SBATCH --cpus-per-task=4 --mem=16G\n"

// Two live scripts of one job name and resources in one directory are two
// scripts, not versions of each other: neither's runs are the other's.
// Once one is gone, or replaced by a script of another name, its runs are
// an earlier version's of the one left (the script renamed as it was
// edited), marked so.
func TestGatherASecondLiveScriptIsNotAnEarlierVersion(t *testing.T) {
	ctx := context.Background()
	site, _ := catalog.Builtin("wulver")
	st := historytest.FromDump(t, site, twinDump)
	dir := t.TempDir()
	okPath, failPath := filepath.Join(dir, "ok.sh"), filepath.Join(dir, "fail.sh")
	ok := catalogtest.WriteScript(t, okPath, twinScript+"exit 0\n")
	fail := catalogtest.WriteScript(t, failPath, twinScript+"exit 1\n")
	// fail.sh has run (job 22); ok.sh's job 21 is not linked yet.
	if err := st.RecordSubmissions(ctx, []history.Submission{{Cluster: "migdev", JobID: "22", Fingerprint: fail.Fingerprint(),
		Source: failPath, Script: failPath, Submitted: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	runsOf := func(path string, s *slurm.Script) []Run {
		t.Helper()
		job, err := GatherFor(ctx, site, GatherRequest{Path: path, Script: s, User: "alice", WaitsSince: time.Unix(0, 0)}, st)
		if err != nil {
			t.Fatal(err)
		}
		return job.Runs
	}
	if runs := runsOf(okPath, ok); len(runs) != 0 {
		t.Errorf("ok.sh has fail.sh's runs: %+v", runs)
	}
	key := KeyOf(okPath, ok, site, "alice")
	if recs, err := History(ctx, &key, 0, st); err != nil || len(recs) != 0 {
		t.Errorf("history of ok.sh: %+v, %v", recs, err)
	}
	// fail.sh replaced by a script of another name: its job is an earlier version's.
	catalogtest.WriteScript(t, failPath, "#!/bin/bash\n#SBATCH -J other\npython other.py\n")
	if runs := runsOf(okPath, ok); len(runs) != 1 || runs[0].JobID != "22" || !runs[0].Earlier || runs[0].EarlierBy != history.EarlierByName {
		t.Errorf("fail.sh replaced: runs %+v", runs)
	}
	// Gone: the same.
	os.Remove(failPath)
	if runs := runsOf(okPath, ok); len(runs) != 1 || runs[0].JobID != "22" || !runs[0].Earlier {
		t.Errorf("fail.sh gone: runs %+v", runs)
	}
}

// history asks for a script's notes only: a request with NoWaits reads no
// queue waits, which at a million jobs were most of what it cost; the same
// request without reads them, from any date when it names none.
func TestGatherReadsQueueWaitsOnlyWhenAsked(t *testing.T) {
	ctx := context.Background()
	site, _ := catalog.Builtin("wulver")
	st := historytest.FromDump(t, site, trainDump)
	path := filepath.Join(t.TempDir(), "train.sh")
	s := catalogtest.WriteScript(t, path, trainV1)
	with, err := GatherFor(ctx, site, GatherRequest{Path: path, Script: s, WaitsSince: time.Unix(0, 0)}, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(with.QueueWaitS) == 0 {
		t.Fatal("no queue waits read with a date: the dump has none to test with")
	}
	undated, err := GatherFor(ctx, site, GatherRequest{Path: path, Script: s}, st)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(undated.QueueWaitS, with.QueueWaitS) {
		t.Errorf("queue waits with no date %v, since 1970 %v", undated.QueueWaitS, with.QueueWaitS)
	}
	without, err := GatherFor(ctx, site, GatherRequest{Path: path, Script: s, WaitsSince: time.Unix(0, 0), NoWaits: true}, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(without.QueueWaitS) != 0 {
		t.Errorf("queue waits read with NoWaits: %v", without.QueueWaitS)
	}
	if !slices.Equal(with.Notes, without.Notes) {
		t.Errorf("notes differ: %q with waits, %q without", with.Notes, without.Notes)
	}
}
