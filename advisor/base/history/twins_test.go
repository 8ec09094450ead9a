package history

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

// twinsDump holds jobs 4242 to 4246 as accounting gives them.
const twinsDump = `JobIDRaw|JobID|User|State|ExitCode|Submit|Start|End|ElapsedRaw|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName
4242|4242|alice|COMPLETED|0:0|2026-11-21T02:00:00|2026-11-21T02:00:05|2026-11-21T02:01:05|60|1|4|16G|cpu=4,gres/gpu:a100_10g=1,gres/gpu=1,mem=16G,node=1|train.sh
4243|4243|alice|COMPLETED|0:0|2026-11-21T03:00:00|2026-11-21T03:00:05|2026-11-21T03:01:05|60|1|4|16G|cpu=4,gres/gpu:a100_20g=1,gres/gpu=1,mem=16G,node=1|train.sh
4244|4244|alice|COMPLETED|0:0|2026-11-21T04:00:00|2026-11-21T04:00:05|2026-11-21T04:01:05|60|1|4|16G|cpu=4,gres/gpu:a100_20g=1,gres/gpu=1,mem=16G,node=1|train.sh
4245|4245|alice|COMPLETED|0:0|2026-11-21T05:00:00|2026-11-21T05:00:05|2026-11-21T05:01:05|60|1|4|16G|cpu=4,gres/gpu:a100_20g=1,gres/gpu=1,mem=16G,node=1|train.sh
4246|4246|alice|COMPLETED|0:0|2026-11-21T06:00:00|2026-11-21T06:00:05|2026-11-21T06:01:05|60|1|4|16G|cpu=4,gres/gpu:a100_20g=1,gres/gpu=1,mem=16G,node=1|train.sh
`

// dumpLines keeps the header and the lines of jobs ids, with edit applied.
func dumpLines(ids string, edit func(string) string) string {
	lines := strings.SplitAfter(twinsDump, "\n")
	out := lines[0]
	for _, l := range lines[1:] {
		if id, _, _ := strings.Cut(l, "|"); id != "" && strings.Contains(" "+ids+" ", " "+id+" ") {
			out += edit(l)
		}
	}
	return out
}

func same(l string) string { return l }

func scanned(t *testing.T, text string) *slurm.OutputEvidence {
	t.Helper()
	ev, err := slurm.ScanOutput(strings.NewReader(text), slurm.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func (s *Store) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A dump imported under the fallback name ("local": Slurm could not be
// asked) and the same jobs collected later under the cluster's real name
// are one job each: the merge files the fallback's record under the real
// name with everything keyed by it (its output's evidence, whether
// slurmdbd has its script, the submissions that link it), keeping the
// complete record and the newer scan and submission where both exist. A
// job of the same number submitted at another time is another job; one
// that two real clusters hold is left where it is.
func TestFallbackJobsAreFiledUnderTheRealName(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	importAs(t, s, "local", dumpLines("4242 4243 4244 4246", same))
	// The real cluster: 4243 still running when collected, 4244 a later job of the same number.
	importAs(t, s, "migdev", dumpLines("4242 4243 4244 4245 4246", func(l string) string {
		l = strings.Replace(l, "4243|4243|alice|COMPLETED", "4243|4243|alice|RUNNING", 1)
		return strings.Replace(l, "2026-11-21T04:00:00", "2026-11-22T04:00:00", 1)
	}))
	importAs(t, s, "other", dumpLines("4246", same))
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	// 4242: the fallback's scan is newer; 4243: the real one's.
	for _, o := range []struct {
		cluster, key string
		mtime        time.Time
		text         string
	}{
		{"local", "4242", at.Add(time.Hour), "MIGADVISOR_WORK 100 samples\n"},
		{"migdev", "4242", at, "MIGADVISOR_WORK 1 samples\n"},
		{"local", "4243", at, "MIGADVISOR_WORK 2 samples\n"},
		{"migdev", "4243", at.Add(time.Hour), "MIGADVISOR_WORK 200 samples\n"},
	} {
		if err := s.RecordOutput(ctx, o.cluster, o.key, "/w/slurm-"+o.key+".out", 10, o.mtime, scanned(t, o.text)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.MarkUnscripted(ctx, []UnlinkedJob{{Cluster: "local", Key: "4242"}}); err != nil {
		t.Fatal(err)
	}
	sub := func(cluster, id, fp string, at time.Time) Submission {
		return Submission{Cluster: cluster, JobID: id, Fingerprint: fp, Source: "/u/train.sh", Script: "/u/train.sh", Submitted: at}
	}
	if err := s.RecordSubmissions(ctx, []Submission{sub("local", "4242", "fp", at), sub("local", "4243", "old", at),
		sub("migdev", "4243", "new", at.Add(time.Hour)), sub("local", "4244", "fp", at)}); err != nil {
		t.Fatal(err)
	}

	moved, err := s.MergeFallbackJobs(ctx, []string{"local"})
	if err != nil || !slices.Equal(moved, []Refiled{{From: "local", To: "migdev", Jobs: 2}}) {
		t.Fatalf("merged %+v, %v; want jobs 4242 and 4243 from local to migdev", moved, err)
	}
	var held []string
	rows, _ := s.db.Query(`SELECT cluster || '/' || job_key || ' ' || state FROM jobs ORDER BY cluster, job_key`)
	for rows.Next() {
		var h string
		rows.Scan(&h)
		held = append(held, h)
	}
	rows.Close()
	want := []string{"local/4244 COMPLETED", "local/4246 COMPLETED", "migdev/4242 COMPLETED", "migdev/4243 COMPLETED",
		"migdev/4244 COMPLETED", "migdev/4245 COMPLETED", "migdev/4246 COMPLETED", "other/4246 COMPLETED"}
	if !slices.Equal(held, want) {
		t.Errorf("jobs\n%v\nwant\n%v", held, want)
	}
	recs, err := s.History(ctx, HistoryFilter{Keys: [][2]string{{"migdev", "4242"}, {"migdev", "4243"}}})
	if err != nil || len(recs) != 2 {
		t.Fatalf("history %v %v", jobIDs(recs), err)
	}
	for _, r := range recs {
		wantWork, wantFP := map[string]float64{"4242": 100, "4243": 200}[r.Key], map[string]string{"4242": "fp", "4243": "new"}[r.Key]
		if r.Work == nil || *r.Work != wantWork || r.Fingerprint != wantFP {
			t.Errorf("job %s: work %v, script %q; want %v, %q", r.Key, r.Work, r.Fingerprint, wantWork, wantFP)
		}
	}
	if n := s.count(t, `SELECT count(*) FROM outputs WHERE cluster = 'local' AND job_key IN ('4242', '4243')`); n != 0 {
		t.Errorf("%d scans left under local", n)
	}
	if n := s.count(t, `SELECT count(*) FROM unscripted WHERE cluster = 'migdev' AND job_key = '4242'`); n != 1 {
		t.Error("that slurmdbd has no script of 4242 was lost")
	}
	if n := s.count(t, `SELECT count(*) FROM submissions WHERE cluster = 'local' AND job_id IN ('4242', '4243')`); n != 0 {
		t.Errorf("%d submissions left under local", n)
	}
	if tr, _ := s.Tracked(ctx, TrackedFilter{JobIDs: []string{"4244"}}); len(tr) != 1 || tr[0].Cluster != "local" || len(tr[0].Jobs) != 1 {
		t.Errorf("another job of the same number moved: %+v", tr)
	}
	if moved, err := s.MergeFallbackJobs(ctx, []string{"local"}); err != nil || len(moved) != 0 {
		t.Errorf("merging again: %+v %v", moved, err)
	}
	// With no real name beside it, the fallback's jobs stay.
	lone := openTemp(t)
	importAs(t, lone, "local", twinsDump)
	if moved, err := lone.MergeFallbackJobs(ctx, []string{"local"}); err != nil || len(moved) != 0 {
		t.Errorf("alone: %+v %v", moved, err)
	}
}

// Readers count the same job (its number and submit time) once whatever
// names hold it; the submissions of one job under two names are listed
// once (the newer); a job id two clusters hold as different jobs is
// ambiguous, as the same job it is not.
func TestTheSameJobUnderTwoNamesCountsOnce(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	importAs(t, s, "a", dumpLines("4242 4243 4244", same))
	importAs(t, s, "b", dumpLines("4242 4243 4244", func(l string) string {
		return strings.Replace(l, "2026-11-21T04:00:00", "2026-11-22T04:00:00", 1)
	}))
	at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	var subs []Submission
	for _, c := range []string{"a", "b"} {
		subs = append(subs, Submission{Cluster: c, JobID: "4242", Fingerprint: "fp", Source: "/u/train.sh", Script: "/u/train.sh", Submitted: at})
		at = at.Add(time.Minute)
	}
	// Tracked under a third name: the job is the one both hold.
	subs = append(subs, Submission{Cluster: "c", JobID: "4243", Fingerprint: "fp", Source: "/u/train.sh", Script: "/u/train.sh", Submitted: at})
	if err := s.RecordSubmissions(ctx, subs); err != nil {
		t.Fatal(err)
	}
	if recs, err := s.History(ctx, HistoryFilter{Fingerprint: "fp"}); err != nil || len(recs) != 2 {
		t.Errorf("history of the script: %v %v, want 4243 and 4242 once", jobIDs(recs), err)
	}
	all, err := s.History(ctx, HistoryFilter{})
	var ids []string
	for _, r := range all {
		ids = append(ids, r.JobID)
	}
	if err != nil || !slices.Equal(ids, []string{"4244", "4244", "4243", "4242"}) {
		t.Errorf("every job: %v %v (4244 is two jobs)", ids, err)
	}
	if first, _ := s.History(ctx, HistoryFilter{Limit: 3}); len(first) != 3 {
		t.Errorf("the newest 3: %v", jobIDs(first))
	}
	if n, err := s.RelinkSubmissions(ctx); err != nil || n != 1 {
		t.Errorf("relinked %d %v, want 4243's", n, err)
	}
	if linked, _ := s.History(ctx, HistoryFilter{Tracked: true}); len(linked) != 2 || linked[1].Fingerprint != "fp" {
		t.Errorf("tracked jobs: %v", jobIDs(linked))
	}
	tr, err := s.Tracked(ctx, TrackedFilter{})
	if err != nil || len(tr) != 2 || tr[0].JobID != "4242" || len(tr[0].Jobs) != 1 || tr[1].JobID != "4243" || len(tr[1].Jobs) != 1 {
		t.Fatalf("tracked %+v %v, want 4242 and 4243 once each, linked", tr, err)
	}
	for id, want := range map[string]JobClusters{"4242": {Names: []string{"a", "b"}, Same: true}, "4244": {Names: []string{"a", "b"}},
		"4245": {Names: nil, Same: true}} {
		if got, err := s.ClustersOfJob(ctx, id); err != nil || !slices.Equal(got.Names, want.Names) || got.Same != want.Same {
			t.Errorf("clusters of %s: %+v %v, want %+v", id, got, err, want)
		}
	}
}
