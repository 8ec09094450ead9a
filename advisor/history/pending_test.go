package history

import (
	"context"
	"testing"
	"time"
)

// carol submitted train.sh twice a second apart from /home/carol/a, and
// eval.sh from /home/carol/b; dave's job of the same name ran in his own
// directory.
const pendingDump = `JobIDRaw|JobID|Cluster|User|Account|State|ExitCode|Submit|Start|End|ElapsedRaw|NNodes|AllocCPUS|ReqMem|AllocTRES|WorkDir|JobName
41|41|migdev|carol|physics|COMPLETED|0:0|2026-11-20T10:00:01|2026-11-20T10:00:05|2026-11-20T10:01:05|60|1|1|4G|cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=4G,node=1|/home/carol/a|train.sh
42|42|migdev|carol|physics|COMPLETED|0:0|2026-11-20T10:00:02|2026-11-20T10:00:05|2026-11-20T10:01:05|60|1|1|4G|cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=4G,node=1|/home/carol/a|train.sh
43|43|migdev|carol|physics|COMPLETED|0:0|2026-11-20T10:00:02|2026-11-20T10:00:05|2026-11-20T10:01:05|60|1|1|4G|cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=4G,node=1|/home/carol/b|eval.sh
44|44|migdev|dave|physics|COMPLETED|0:0|2026-11-20T10:00:01|2026-11-20T10:00:05|2026-11-20T10:01:05|60|1|1|4G|cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=4G,node=1|/home/dave|train.sh
`

// Submissions recorded without their job ids are linked by collect to the
// jobs of the same user, name and directory, submitted about when the
// wrapper saw them, each job once; one whose job never came is dropped a
// day later, and kept until then.
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
		return Submission{Fingerprint: fp, Source: dir + "/" + name, Script: dir + "/" + name, WorkDir: dir, JobName: name,
			User: "carol", Submitted: at(clock)}
	}
	subs := []Submission{
		sub("fp-train", "train.sh", "/home/carol/a", "10:00:00.900"),
		sub("fp-train", "train.sh", "/home/carol/a", "10:00:01.800"),
		sub("fp-eval", "eval.sh", "/home/carol/b", "10:00:01.500"),
		sub("fp-lost", "lost.sh", "/home/carol/a", "10:00:03.000"), // sbatch refused it, twice in the same microsecond
		sub("fp-lost", "lost.sh", "/home/carol/a", "10:00:03.000"),
	}
	subs[3].Token, subs[4].Token = "1-100", "1-101"
	if err := st.RecordSubmissions(ctx, append(subs, subs[0])); err != nil { // drained twice: once
		t.Fatal(err)
	}
	if n, err := st.PendingCount(ctx, time.Time{}); err != nil || n != 5 {
		t.Fatalf("%d pending, %v: want the five submissions", n, err)
	}
	if oldest, ok, err := st.OldestPending(ctx); err != nil || !ok || !oldest.Equal(subs[0].Submitted) {
		t.Fatalf("oldest pending: %v %v %v", oldest, ok, err)
	}
	linked, err := st.LinkPending(ctx, at("10:05:00.000"))
	if err != nil || linked != 3 {
		t.Fatalf("linked %d, %v", linked, err)
	}
	recs, err := st.History(ctx, HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range recs {
		got[r.JobID] = r.Fingerprint
	}
	if got["41"] != "fp-train" || got["42"] != "fp-train" || got["43"] != "fp-eval" || got["44"] != "" {
		t.Errorf("linked: %v", got)
	}
	// The refused ones wait a day, then go.
	if n, _ := st.PendingCount(ctx, time.Time{}); n != 2 {
		t.Errorf("%d pending after linking, want the two refused", n)
	}
	if n, err := st.LinkPending(ctx, at("10:00:03.000").Add(PendingKept+time.Minute)); err != nil || n != 0 {
		t.Fatalf("a day later: %d, %v", n, err)
	}
	if _, ok, _ := st.OldestPending(ctx); ok {
		t.Error("the unlinked submission outlived its day")
	}
}
