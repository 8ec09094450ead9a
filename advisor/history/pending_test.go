package history

import (
	"context"
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
	if got["41"] != "fp-train" || got["42"] != "fp-train" || got["43"] != "fp-eval" || got["44"] != "" || got["51"] != "fp-fixed" {
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
