package history

import (
	"context"
	"slices"
	"testing"
	"time"
)

// carol submitted train.sh twice a second apart from /home/carol/a,
// eval.sh from /home/carol/b (with --chdir ./b, as Slurm keeps it), and
// fixed.sh after sbatch refused broken.sh of the same name; dave's job of
// the same name ran in his own directory.
const pendingDump = `JobIDRaw|JobID|Cluster|User|Account|State|ExitCode|Submit|Start|End|ElapsedRaw|NNodes|AllocCPUS|ReqMem|AllocTRES|WorkDir|JobName
41|41|migdev|carol|physics|COMPLETED|0:0|2026-11-20T10:00:01|2026-11-20T10:00:05|2026-11-20T10:01:05|60|1|1|4G|cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=4G,node=1|/home/carol/a|train.sh
42|42|migdev|carol|physics|COMPLETED|0:0|2026-11-20T10:00:02|2026-11-20T10:00:05|2026-11-20T10:01:05|60|1|1|4G|cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=4G,node=1|/home/carol/a|train.sh
43|43|migdev|carol|physics|COMPLETED|0:0|2026-11-20T10:00:02|2026-11-20T10:00:05|2026-11-20T10:01:05|60|1|1|4G|cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=4G,node=1|/home/carol/./b|eval.sh
44|44|migdev|dave|physics|COMPLETED|0:0|2026-11-20T10:00:01|2026-11-20T10:00:05|2026-11-20T10:01:05|60|1|1|4G|cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=4G,node=1|/home/dave|train.sh
51|51|migdev|carol|physics|COMPLETED|0:0|2026-11-20T10:00:31|2026-11-20T10:00:35|2026-11-20T10:01:35|60|1|1|4G|cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=4G,node=1|/home/carol/a|run
`

// Submissions recorded without their job ids are linked by collect to the
// jobs of the same user, name and directory, submitted about when the
// wrapper saw them, nearest first and each job once: a refused submission
// does not take the job of the corrected one after it. Once accounting was
// asked about their time, those that found no job a day later are dropped;
// until then they wait.
func TestLinkPending(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	importText(t, st, pendingDump)
	at := func(clock string) time.Time {
		ts, err := time.ParseInLocation("2006-01-02T15:04:05.000", "2026-11-20T"+clock, time.Local)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	sub := func(fp, name, dir, clock string) Submission {
		return Submission{Fingerprint: fp, Source: dir + "/x", Script: dir + "/x", WorkDir: dir, JobName: name,
			User: "carol", Submitted: at(clock), Token: fp + clock}
	}
	subs := []Submission{
		sub("fp-train", "train.sh", "/home/carol/a", "10:00:00.900"),
		sub("fp-train", "train.sh", "/home/carol/a", "10:00:01.800"),
		sub("fp-eval", "eval.sh", "/home/carol/b/", "10:00:01.500"),
		sub("fp-broken", "run", "/home/carol/a", "10:00:20.000"), // refused by sbatch
		sub("fp-fixed", "run", "/home/carol/a", "10:00:30.500"),
		sub("fp-later", "later.sh", "/home/carol/a", "10:30:00.000"), // its job not in accounting yet
	}
	if err := st.RecordSubmissions(ctx, append(subs, subs[0])); err != nil { // drained twice: once
		t.Fatal(err)
	}
	if n, err := st.PendingCount(ctx, time.Time{}); err != nil || n != len(subs) {
		t.Fatalf("%d pending, %v: want %d", n, err, len(subs))
	}
	// A dump imported: accounting not asked about the records' times.
	linked, dropped, err := st.LinkPending(ctx, at("10:31:00.000"), time.Time{})
	if err != nil || linked != 4 || dropped != 0 {
		t.Fatalf("linked %d, dropped %d, %v", linked, dropped, err)
	}
	recs, err := st.History(ctx, HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range recs {
		got[r.JobID] = r.Fingerprint
	}
	if got["41"] != "fp-train" || got["42"] != "fp-train" || got["43"] != "fp-eval" || got["51"] != "fp-fixed" || notUnlinked(got, "44") != nil {
		t.Errorf("linked: %v", got)
	}
	if n, _ := st.PendingCount(ctx, time.Time{}); n != 2 {
		t.Errorf("%d pending, want the refused and the later one (accounting was not asked)", n)
	}
	// Accounting asked since 09:59: slurmdbd may lag, so they wait a day;
	// then the refused one goes, the later one still waits.
	if _, dropped, err := st.LinkPending(ctx, at("10:31:00.000"), at("09:59:00.000")); err != nil || dropped != 0 {
		t.Fatalf("dropped %d within the day, %v", dropped, err)
	}
	if _, dropped, err := st.LinkPending(ctx, at("10:20:00.000").Add(PendingRefused), at("09:59:00.000")); err != nil || dropped != 1 {
		t.Fatalf("dropped %d a day later, %v", dropped, err)
	}
	if n, _ := st.PendingCount(ctx, time.Time{}); n != 1 {
		t.Errorf("%d pending, want the later one alone", n)
	}
	if err := st.DropStalePending(ctx, at("10:30:00.000").Add(PendingKept+time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := st.OldestPending(ctx); ok {
		t.Error("a record outlived PendingKept")
	}
}

// sweep.sh and sweep2.sh, both named sweep, submitted from /home/carol/s at
// once: 61 ran sweep.sh, 62 sweep2.sh (their scripts as slurmdbd stored
// them); 63 ran sweep.sh too, with Slurm's own sbatch 10 s before; 64, of
// sweep.sh, with Slurm's own sbatch the same second, just before them.
const sameNameDump = `JobIDRaw|JobID|Cluster|User|Account|State|ExitCode|Submit|Start|End|ElapsedRaw|NNodes|AllocCPUS|ReqMem|AllocTRES|WorkDir|JobName
63|63|migdev|carol|physics|COMPLETED|0:0|2026-11-20T10:59:50|2026-11-20T11:00:05|2026-11-20T11:01:05|60|1|1|4G|cpu=1,mem=4G,node=1|/home/carol/s|sweep
64|64|migdev|carol|physics|COMPLETED|0:0|2026-11-20T11:00:00|2026-11-20T11:00:05|2026-11-20T11:01:05|60|1|1|4G|cpu=1,mem=4G,node=1|/home/carol/s|sweep
62|62|migdev|carol|physics|FAILED|1:0|2026-11-20T11:00:00|2026-11-20T11:00:05|2026-11-20T11:01:05|60|1|1|4G|cpu=1,mem=4G,node=1|/home/carol/s|sweep
65|65|migdev|carol|physics|COMPLETED|0:0|2026-11-20T11:00:01|2026-11-20T11:00:05|2026-11-20T11:01:05|60|1|1|4G|cpu=1,mem=4G,node=1|/home/carol/s|sweep
`

const (
	sweepA = "#!/bin/bash\n#SBATCH -J sweep\nexit 0\n"
	sweepB = "#!/bin/bash\n#SBATCH -J sweep\nexit 1\n"
)

// twinRecords records the wrapper's records of sweep.sh (its job: 65) at
// 11:00:00.100 and sweep2.sh (62) at 11:00:00.900: each nearer in time to
// the other's job.
func twinRecords(t *testing.T, st *Store) {
	t.Helper()
	at := func(clock string) time.Time {
		ts, err := time.ParseInLocation("2006-01-02T15:04:05.000", "2026-11-20T"+clock, time.Local)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	sub := func(fp, script, text, clock string) Submission {
		return Submission{Fingerprint: fp, Source: script, Script: script, WorkDir: "/home/carol/s", JobName: "sweep",
			User: "carol", Submitted: at(clock), Token: fp + clock, ScriptHash: ScriptHash([]byte(text))}
	}
	if err := st.RecordSubmissions(context.Background(), []Submission{
		sub("fp-a", "/home/carol/s/sweep.sh", sweepA, "11:00:00.100"),
		sub("fp-b", "/home/carol/s/sweep2.sh", sweepB, "11:00:00.900"),
	}); err != nil {
		t.Fatal(err)
	}
}

// notUnlinked are those of ids that got (linkedTo's) does not hold as a
// job linked to nothing: linked, or not in the history at all. A check
// that a job is linked to nothing fails where the job is missing: it
// cannot see its subject.
func notUnlinked(got map[string]string, ids ...string) []string {
	var out []string
	for _, id := range ids {
		if fp, ok := got[id]; !ok || fp != "" {
			out = append(out, id)
		}
	}
	return out
}

// linkedTo maps each job id in the history to the fingerprint a submission
// links it to, "" for none.
func linkedTo(t *testing.T, st *Store) map[string]string {
	t.Helper()
	recs, err := st.History(context.Background(), HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range recs {
		got[r.JobID] = r.Fingerprint
	}
	return got
}

// Two scripts of one job name submitted from one directory at once: time
// cannot tell their jobs apart (each record is nearer the other's job), so
// without slurmdbd's scripts neither is linked, both are said ambiguous and
// wait; a job submitted 10 s before them, or just before with Slurm's own
// sbatch, is neither's.
func TestLinkPendingLeavesSameNameTwinsAmbiguous(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	importText(t, st, sameNameDump)
	twinRecords(t, st)
	now := time.Date(2026, 11, 20, 11, 30, 0, 0, time.Local)
	res, err := st.LinkPendingWith(ctx, now, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Linked != 0 || res.Ambiguous != 2 {
		t.Errorf("%+v, want none linked and 2 ambiguous: %v", res, linkedTo(t, st))
	}
	if n, _ := st.PendingCount(ctx, time.Time{}); n != 2 {
		t.Errorf("%d pending, want both kept for a later collect", n)
	}
	// A day later, asked about: still ambiguous, not taken for refused.
	res, err = st.LinkPendingWith(ctx, now.Add(PendingRefused+time.Hour), now.Add(-time.Hour), nil)
	if err != nil || res.Dropped != 0 || res.Ambiguous != 2 {
		t.Errorf("a day later: %+v, %v", res, err)
	}
}

// Where slurmdbd stored the jobs' scripts, each record is linked to the job
// that ran its own script, whatever the times say; a job whose stored
// script is another is never linked; of the jobs of the same script, the
// one submitted just before the records (64) is left, and the one 10 s
// before (63) is never a candidate.
func TestLinkPendingChecksStoredScripts(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	importText(t, st, sameNameDump)
	twinRecords(t, st)
	asked := map[string][]string{}
	stored := func(_ context.Context, cluster string, ids []string) (map[string][]byte, error) {
		asked[cluster] = append(asked[cluster], ids...)
		return map[string][]byte{"62": []byte(sweepB + "\n"), "63": []byte(sweepA), "64": []byte(sweepA), "65": []byte(sweepA)}, nil
	}
	now := time.Date(2026, 11, 20, 11, 30, 0, 0, time.Local)
	res, err := st.LinkPendingWith(ctx, now, time.Time{}, stored)
	if err != nil {
		t.Fatal(err)
	}
	got := linkedTo(t, st)
	if res.Linked != 2 || res.Ambiguous != 0 || got["65"] != "fp-a" || got["62"] != "fp-b" || notUnlinked(got, "63", "64") != nil {
		t.Errorf("%+v: linked %v", res, got)
	}
	if slices.Contains(asked["migdev"], "63") {
		t.Errorf("asked slurmdbd for the script of job 63, submitted 10 s before the records: %v", asked)
	}
}

// A record whose only job ran another script (its own submission never
// made a job) links nothing, and is dropped as refused a day later.
func TestLinkPendingNeverLinksAnotherScript(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	importText(t, st, sameNameDump)
	rec := Submission{Fingerprint: "fp-c", Source: "/home/carol/s/c.sh", Script: "/home/carol/s/c.sh", WorkDir: "/home/carol/s",
		JobName: "sweep", User: "carol", Submitted: time.Date(2026, 11, 20, 11, 0, 0, 500_000_000, time.Local), Token: "c",
		ScriptHash: ScriptHash([]byte("#!/bin/bash\nexit 2\n"))}
	if err := st.RecordSubmissions(ctx, []Submission{rec}); err != nil {
		t.Fatal(err)
	}
	stored := func(context.Context, string, []string) (map[string][]byte, error) {
		return map[string][]byte{"62": []byte(sweepB), "64": []byte(sweepA), "65": []byte(sweepA)}, nil
	}
	res, err := st.LinkPendingWith(ctx, rec.Submitted.Add(PendingRefused+time.Minute), rec.Submitted.Add(-time.Minute), stored)
	if err != nil || res != (PendingLinks{Dropped: 1}) {
		t.Errorf("%+v, %v: want it dropped, nothing linked (%v)", res, err, linkedTo(t, st))
	}
}
