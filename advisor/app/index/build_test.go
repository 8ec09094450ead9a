package index

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
)

// alice's runs of train.sh: 11 on 1g.10gb, 12 failed on 2g.20gb, 14 on
// the whole GPU; bob's 13 of his own.
const dump = `JobIDRaw|JobID|Cluster|User|Account|State|ExitCode|Submit|Start|End|ElapsedRaw|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName
11|11|migdev|alice|physics|COMPLETED|0:0|2026-11-20T01:00:00|2026-11-20T01:00:05|2026-11-20T01:01:05|60|1|4|16G|cpu=4,gres/gpu:a100_10g=1,gres/gpu=1,mem=16G,node=1|secret-name
12|12|migdev|alice|physics|FAILED|1:0|2026-11-20T02:00:00|2026-11-20T02:00:05|2026-11-20T02:01:05|60|1|4|16G|cpu=4,gres/gpu:a100_20g=1,gres/gpu=1,mem=16G,node=1|secret-name
13|13|migdev|bob|chemistry|COMPLETED|0:0|2026-11-20T03:00:00|2026-11-20T03:00:05|2026-11-20T03:01:05|60|1|4|16G|cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1|bobs-job
14|14|migdev|alice|physics|COMPLETED|0:0|2026-11-20T04:00:00|2026-11-20T04:00:05|2026-11-20T04:02:05|120|1|4|16G|cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1|secret-name
`

func historyWith(t *testing.T) (*history.Store, string, *slurm.Script, *slurm.Script) {
	t.Helper()
	ctx := context.Background()
	site, _ := catalog.Builtin("wulver")
	st := historytest.FromDump(t, site, dump)
	path := filepath.Join(t.TempDir(), "train.sh")
	v1 := catalogtest.WriteScript(t, path, "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\npython train.py --epochs 2\n")
	v2 := catalogtest.WriteScript(t, path, "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\npython train.py --epochs 3\n")
	var subs []history.Submission
	for id, s := range map[string]*slurm.Script{"11": v1, "12": v1, "14": v2} {
		subs = append(subs, history.Submission{Cluster: "migdev", JobID: id, Fingerprint: s.Fingerprint(), Source: path, Script: path, Submitted: time.Now()})
	}
	other := catalogtest.WriteScript(t, filepath.Join(t.TempDir(), "bob.sh"), "#!/bin/bash\npython bob.py\n")
	subs = append(subs, history.Submission{Cluster: "migdev", JobID: "13", Fingerprint: other.Fingerprint(), Source: "/home/bob/bob.sh", Script: "/home/bob/bob.sh", Submitted: time.Now()})
	if err := st.RecordSubmissions(ctx, subs); err != nil {
		t.Fatal(err)
	}
	return st, path, v1, v2
}

// A site's published index finds each script's runs by its fingerprint,
// with the figures the advice needs, and holds no user, account, job name
// or path; the snapshot beside it is the whole history, opened immutable.
func TestPublish(t *testing.T) {
	ctx := context.Background()
	st, path, v1, v2 := historyWith(t)
	dir := t.TempDir()
	pub, err := Publish(ctx, st, dir)
	if err != nil {
		t.Fatal(err)
	}
	if pub.Scripts != 3 || pub.Runs != 4 || pub.Paths != 0 {
		t.Errorf("published %+v", pub)
	}
	data, _ := os.ReadFile(pub.Index)
	for _, secret := range []string{"alice", "bob", "physics", "chemistry", "secret-name", "bobs-job", path, "/home/bob", v1.Fingerprint()} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("the site's index holds %q", secret)
		}
	}
	r, err := Open(pub.Index)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	runs, err := r.Runs(v1.Fingerprint())
	if err != nil || len(runs) != 2 {
		t.Fatalf("v1's runs: %+v %v", runs, err)
	}
	byID := map[string]advisor.Run{}
	for _, run := range runs {
		byID[run.JobID] = run
	}
	if a := byID["11"]; a.Profile != "1g.10gb" || !a.Completed || a.Seconds != 60 || a.CPUs != 4 || a.ReqMemMiB != 16384 || a.User != "" {
		t.Errorf("job 11: %+v", a)
	}
	if b := byID["12"]; b.Profile != "2g.20gb" || b.Completed || b.State != "FAILED" || b.ExitCode != 1 || b.Outcome.Kind == "" {
		t.Errorf("job 12: %+v", b)
	}
	// The site's index has no paths: no earlier versions from it.
	key := advisor.ScriptKey{Fingerprint: v2.Fingerprint(), Versions: history.Versions{Path: path}}
	if runs, err := ScriptRuns(key, nil, r); err != nil || len(runs) != 1 || runs[0].JobID != "14" {
		t.Errorf("v2 in the site's index: %+v %v", runs, err)
	}

	snap, err := history.OpenWith(ctx, pub.Snapshot, history.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	recs, err := snap.History(ctx, history.HistoryFilter{})
	if err != nil || len(recs) != 4 {
		t.Errorf("the snapshot: %d records, %v", len(recs), err)
	}
	head := make([]byte, 20)
	f, _ := os.Open(pub.Snapshot)
	f.ReadAt(head, 0)
	f.Close()
	if head[18] != 1 || head[19] != 1 {
		t.Errorf("the snapshot is not in rollback-journal mode: %v", head[18:20])
	}
	for _, sidecar := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(pub.Snapshot + sidecar); err == nil {
			t.Errorf("the snapshot has a %s file after a read", sidecar)
		}
	}
}

// A user's own index keeps their scripts' paths (hashed): the script edited
// (another fingerprint) finds its earlier version's runs there, marked so,
// until it has runs of its own.
func TestAUsersIndexFindsEarlierVersions(t *testing.T) {
	ctx := context.Background()
	st, path, v1, _ := historyWith(t)
	entries, stats, err := Build(ctx, st, Options{Private: true})
	if err != nil || stats.Paths != 2 {
		t.Fatalf("%+v %v", stats, err)
	}
	file := filepath.Join(t.TempDir(), "own.idx")
	if err := WriteFile(file, entries); err != nil {
		t.Fatal(err)
	}
	own, err := Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	v3 := catalogtest.WriteScript(t, path, "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\npython train.py --epochs 4\n")
	runs, err := ScriptRuns(advisor.ScriptKey{Fingerprint: v3.Fingerprint(), Versions: history.Versions{Path: path}}, own)
	if err != nil || len(runs) != 3 {
		t.Fatalf("v3's runs: %+v %v", runs, err)
	}
	for _, r := range runs {
		if !r.Earlier || r.EarlierBy != history.EarlierByPath {
			t.Errorf("%s: earlier %v by %q", r.JobID, r.Earlier, r.EarlierBy)
		}
	}
	// v1 has runs of its own: no earlier versions are read.
	if runs, _ := ScriptRuns(advisor.ScriptKey{Fingerprint: v1.Fingerprint(), Versions: history.Versions{Path: path}}, own); len(runs) != 2 || runs[0].Earlier {
		t.Errorf("v1's runs: %+v", runs)
	}
}

// What a run's output showed it ran (the framework that held its memory)
// travels in the index to the wrapper, as the history has it.
func TestTheIndexKeepsTheSoftwareARunShowed(t *testing.T) {
	ctx := context.Background()
	st, _, _, v2 := historyWith(t)
	ev, err := slurm.ScanFile("../../../testdata/nvml/h100-memory-holders/prealloc/full.out", slurm.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RecordOutput(ctx, "migdev", "14", "slurm-14.out", 1, time.Now(), ev); err != nil {
		t.Fatal(err)
	}
	pub, err := Publish(ctx, st, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(pub.Index)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	runs, err := r.Runs(v2.Fingerprint())
	if err != nil || len(runs) != 1 || len(runs[0].Software) != 1 || runs[0].Software[0] != slurm.SoftwareJAX || runs[0].PeakMiB != 61428 {
		t.Errorf("v2's runs: %+v %v", runs, err)
	}
}
