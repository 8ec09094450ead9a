package history

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// hasIndex reports whether the history has the index name; for
// "jobs_by_name", whether it has every index an import defers
// (deferredIndexes: the names' and the submissions').
func hasIndex(t *testing.T, s *Store, name string) bool {
	t.Helper()
	names := []string{name}
	if name == "jobs_by_name" {
		names = append(names, "jobs_by_submit")
	}
	for _, name := range names {
		var n int
		if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?`, name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			return false
		}
	}
	return true
}

// anyIndex reports whether the history has either deferred index: an
// import into an empty history must build neither row by row.
func anyIndex(t *testing.T, s *Store) bool {
	t.Helper()
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('jobs_by_name', 'jobs_by_submit')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// The newest jobs are read by walking jobs_by_submit, not by sorting every
// job: a refresh of a user's index reads the newest GPU jobs of a site's
// history of a million for their sessions.
func TestTheNewestJobsAreReadFromTheSubmitIndex(t *testing.T) {
	s := openTemp(t)
	importText(t, s, string(sacctgen.Bytes(3000, "|")))
	text := queryPlan(t, s, `SELECT j.job_key FROM jobs j WHERE j.gpu_count > 0`+newestFirst+` LIMIT 10`)
	if !strings.Contains(text, "USING INDEX jobs_by_submit") || strings.Contains(text, "TEMP B-TREE FOR ORDER BY") {
		t.Errorf("the newest jobs are sorted, not walked: %s", text)
	}
}

// The jobs linked to a script (the output scan's Tracked) are read from
// the submissions, through the jobs' indexes: not by walking every job of
// a site's history and looking each one up among the submissions.
func TestTheTrackedJobsAreReadFromTheSubmissions(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	importText(t, s, string(sacctgen.Bytes(3000, "|")))
	q, args := s.selectJobs(ctx, s.readColumns(), HistoryFilter{Tracked: true})
	text := queryPlan(t, s, q+newestFirst, args...)
	if strings.Contains(text, "SCAN j ") || !strings.Contains(text, "SEARCH j USING") {
		t.Errorf("the tracked jobs are found by walking every job: %s", text)
	}
}

// queryPlan is SQLite's plan of q, its steps joined by "; ".
func queryPlan(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	rows, err := s.db.Query("EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "; ")
}

// An import into an empty history builds the index of job names at its
// end, not row by row, even when it stops part-way; one into a history
// that lost it (a process killed before the end) builds it again.
func TestImportBuildsTheNameIndex(t *testing.T) {
	s := openTemp(t)
	if !hasIndex(t, s, "jobs_by_name") {
		t.Fatal("a new history has no jobs_by_name")
	}
	r, err := slurm.NewSacctReader(strings.NewReader(devDump(t)))
	if err != nil {
		t.Fatal(err)
	}
	n, indexed := 0, false
	stopped := func() (*slurm.AcctJob, error) {
		indexed = indexed || anyIndex(t, s)
		if n++; n == 7 { // the second batch of 4 fails part-way
			return nil, errors.New("sacct: killed")
		}
		return r.Next()
	}
	if _, err := s.ImportJobs(context.Background(), stopped, testOptions()); err == nil {
		t.Fatal("no error from an interrupted import")
	}
	if indexed {
		t.Error("the jobs' names were indexed row by row during an import into an empty history")
	}
	if !hasIndex(t, s, "jobs_by_name") || countJobs(t, s) != 4 {
		t.Fatalf("after a stopped import into an empty history: index %v, %d jobs", hasIndex(t, s, "jobs_by_name"), countJobs(t, s))
	}
	if _, err := s.db.Exec(`DROP INDEX jobs_by_name`); err != nil {
		t.Fatal(err)
	}
	importText(t, s, devDump(t))
	if !hasIndex(t, s, "jobs_by_name") {
		t.Error("an import into a history without the index left it without")
	}
}

// A site store's jobs copied into a new history have their names indexed
// once, after.
func TestLoadTableBuildsTheNameIndex(t *testing.T) {
	s := openTemp(t)
	cols := []string{"cluster", "job_key", "updated", "job_id", "array_job", "name", "state", "gpu_type", "gpu_count", "profile", "stub"}
	rows, indexed := 3, false
	next := func() ([]any, bool, error) {
		indexed = indexed || anyIndex(t, s)
		if rows--; rows < 0 {
			return nil, false, nil
		}
		id := fmt.Sprint(100 + rows)
		return []any{"c1", id, 0, id, id, "train", "COMPLETED", "a100", 1, "full", 0}, true, nil
	}
	if n, err := s.LoadTable(context.Background(), "jobs", cols, next); err != nil || n != 3 {
		t.Fatalf("loaded %d jobs: %v", n, err)
	}
	if indexed || !hasIndex(t, s, "jobs_by_name") {
		t.Errorf("indexed while loading: %v; after: %v", indexed, hasIndex(t, s, "jobs_by_name"))
	}
}

// A job tracked under another cluster name than its record's (a dump
// imported as "local", the job tracked as slurmctld's name), or under none
// (the wrapper's record), is linked: only the others are listed.
func TestUnlinkedNamedLooksUnderEveryClusterName(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	importAs(t, s, "local", noClusterDump)
	unlinked := func() ([]string, int) {
		t.Helper()
		ids, total, err := s.UnlinkedNamed(ctx, []string{"train.sh"}, 20)
		if err != nil {
			t.Fatal(err)
		}
		return ids, total
	}
	if ids, total := unlinked(); !slices.Equal(ids, []string{"4243", "4242"}) || total != 2 {
		t.Fatalf("before any link: %v of %d", ids, total)
	}
	at := time.Date(2026, 11, 21, 4, 0, 0, 0, time.UTC)
	if err := s.RecordSubmissions(ctx, []Submission{{Cluster: "migdev", JobID: "4242", Fingerprint: "fp", Source: "/a/train.sh",
		Script: "/a/train.sh", Submitted: at}}); err != nil {
		t.Fatal(err)
	}
	if ids, total := unlinked(); !slices.Equal(ids, []string{"4243"}) || total != 1 {
		t.Errorf("4242 tracked under another cluster name: %v of %d", ids, total)
	}
	if err := s.RecordSubmissions(ctx, []Submission{{JobID: "4243", Fingerprint: "fp", Source: "/a/train.sh",
		Script: "/a/train.sh", Submitted: at}}); err != nil {
		t.Fatal(err)
	}
	if ids, total := unlinked(); len(ids) != 0 || total != 0 {
		t.Errorf("4243 recorded without a cluster name: %v of %d", ids, total)
	}
}

// newestFirst's two terms order jobs as the four they stand for: submission
// (none last), job number highest first, key, cluster; here on jobs many of
// which share a second, array tasks among them, on two clusters.
func TestNewestFirstKeepsTheFourTermsOrder(t *testing.T) {
	s := openTemp(t)
	importText(t, s, string(sacctgen.Bytes(600, "|")))
	for _, stmt := range []string{
		`UPDATE jobs SET submit = 1790000000 WHERE rowid % 3 = 0`,
		`UPDATE jobs SET submit = NULL WHERE rowid % 11 = 0`,
		`UPDATE jobs SET job_key = CAST(CAST(job_key AS INTEGER) - rowid % 5 AS TEXT) || '_' || (rowid % 13) WHERE rowid % 4 = 1`,
		`UPDATE jobs SET cluster = 'other' WHERE rowid % 6 = 2`,
	} {
		if _, err := s.db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	order := func(by string) []string {
		rows, err := s.db.Query(`SELECT j.cluster || '/' || j.job_key FROM jobs j` + by)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var keys []string
		for rows.Next() {
			var k string
			rows.Scan(&k)
			keys = append(keys, k)
		}
		return keys
	}
	want := order(` ORDER BY coalesce(j.submit, 0) DESC, CAST(j.job_key AS INTEGER) DESC, j.job_key, j.cluster`)
	if got := order(newestFirst); !slices.Equal(got, want) || len(got) < 600 {
		t.Errorf("newestFirst orders %d jobs otherwise than the four terms: first difference at %d", len(got), firstDiff(got, want))
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
