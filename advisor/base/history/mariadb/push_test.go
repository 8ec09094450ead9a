//go:build mariadb

package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// collectorHistory is a collector's history of n generated jobs (with
// their steps' figures), its outbox on for the store.
func collectorHistory(t testing.TB, store *Store, n int) (*history.Store, string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "site.db")
	h, err := history.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if _, err := h.KeepOutbox(ctx, store.Where()); err != nil {
		t.Fatal(err)
	}
	importJobs(t, h, sacctgen.FirstJobID, n)
	return h, path
}

func importJobs(t testing.TB, h *history.Store, first, n int) {
	t.Helper()
	r, err := slurm.NewSacctReader(sacctgen.NewFrom(first, n, slurm.SacctDelimiter))
	if err != nil {
		t.Fatal(err)
	}
	profiles := map[string]string{"a100_10g": "1g.10gb", "a100_20g": "2g.20gb", "a100_40g": "3g.40gb", "a100": "full"}
	if _, err := h.ImportJobs(context.Background(), r.Next, history.ImportOptions{Cluster: "wulver",
		Profile: func(t string, n int) string { return profiles[t] }}); err != nil {
		t.Fatal(err)
	}
}

// tableText is every row of every table of a database, one line a row,
// sorted: what two copies of a history must both say.
func tableText(t *testing.T, db *sql.DB, quoteName func(string) string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, tbl := range history.OutboxTables {
		rows, err := db.Query("SELECT * FROM " + quoteName(tbl.Name))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var line []string
			for _, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				line = append(line, fmt.Sprint(v))
			}
			out[tbl.Name] = append(out[tbl.Name], strings.Join(line, "|"))
		}
		rows.Close()
		slices.Sort(out[tbl.Name])
	}
	return out
}

func sqliteText(t *testing.T, path string) map[string][]string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return tableText(t, db, func(s string) string { return `"` + s + `"` })
}

func sameTables(t *testing.T, what string, got, want map[string][]string) {
	t.Helper()
	for _, tbl := range history.OutboxTables {
		if !slices.Equal(got[tbl.Name], want[tbl.Name]) {
			t.Errorf("%s: %s: %d rows, want %d; first differing:\n%s\n%s", what, tbl.Name, len(got[tbl.Name]), len(want[tbl.Name]),
				firstDiff(got[tbl.Name], want[tbl.Name]), firstDiff(want[tbl.Name], got[tbl.Name]))
		}
	}
}

func firstDiff(a, b []string) string {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return x
		}
	}
	return "(none)"
}

// A collector's history pushed to the store is the store's, row for row:
// its jobs, then a change and a deletion; and the store copied into a new
// history (what a publish starts from) is the collector's again.
func TestMariaDBPushAndCopyBack(t *testing.T) {
	for _, by := range []string{"LOAD DATA", "INSERT"} {
		t.Run(by, func(t *testing.T) { pushAndCopyBack(t, by == "INSERT") })
	}
}

// pushAndCopyBack is the test, with rows sent by LOAD DATA LOCAL or, as to
// a server that refuses it, by INSERT.
func pushAndCopyBack(t *testing.T, refused bool) {
	ctx := context.Background()
	store, err := Open(ctx, testStore(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	store.noLoadData.Store(refused)
	h, path := collectorHistory(t, store, 3000)
	sent, err := store.Push(ctx, h, nil)
	if err != nil || sent < 3000 {
		t.Fatalf("pushed %d changes: %v", sent, err)
	}
	sameTables(t, "first push", tableText(t, store.DB(), quote), sqliteText(t, path))

	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`DELETE FROM jobs WHERE job_key IN (SELECT job_key FROM jobs ORDER BY job_key LIMIT 10);
		UPDATE jobs SET state = 'PREEMPTED', unsettled = 0 WHERE job_key = (SELECT max(job_key) FROM jobs)`); err != nil {
		t.Fatal(err)
	}
	importJobs(t, h, sacctgen.FirstJobID+5000, 500)
	if sent, err := store.Push(ctx, h, nil); err != nil || sent != 511 {
		t.Fatalf("second push: %d changes, %v; want 10 deleted, 1 changed, 500 new", sent, err)
	}
	want := sqliteText(t, path)
	if len(want["jobs"]) != 3000-10+500 {
		t.Fatalf("the collector has %d jobs, want 3490", len(want["jobs"]))
	}
	sameTables(t, "after a change and deletions", tableText(t, store.DB(), quote), want)

	copyPath := filepath.Join(t.TempDir(), "copy.db")
	cp, err := history.Open(ctx, copyPath)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := store.CopyInto(ctx, cp)
	cp.Close()
	if err != nil || jobs != len(want["jobs"]) {
		t.Fatalf("copied %d jobs (%v), want %d", jobs, err, len(want["jobs"]))
	}
	sameTables(t, "the store copied back", sqliteText(t, copyPath), want)
}

// A push cut short, its connection killed by the server in the middle of a
// batch (as when MariaDB stops), loses nothing: the store holds the
// batches committed before, whole, the outbox the rest, and the next push
// completes the store.
func TestMariaDBPushCutShortLosesNothing(t *testing.T) {
	ctx := context.Background()
	opt := testStore(t)
	store, err := Open(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	h, path := collectorHistory(t, store, 3*changesPerPush/2) // two batches and a half: the jobs, then their outputs' rows
	total, _ := h.OutboxLen(ctx)
	admin, err := Connect(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var adminID int64
	admin.SetMaxOpenConns(1)
	admin.QueryRow("SELECT CONNECTION_ID()").Scan(&adminID)
	batches := 0
	testHookInBatch = func() {
		if batches++; batches == 2 { // the second batch, after its first statement
			rows, _ := admin.Query("SELECT id FROM information_schema.processlist WHERE db = ? AND id <> ?", opt.Database, adminID)
			var ids []int64
			for rows.Next() {
				var id int64
				rows.Scan(&id)
				ids = append(ids, id)
			}
			rows.Close() // the admin's one connection is free again
			for _, id := range ids {
				admin.Exec(fmt.Sprintf("KILL CONNECTION %d", id))
			}
		}
	}
	defer func() { testHookInBatch = nil }()
	sent, err := store.Push(ctx, h, nil)
	if err == nil || sent != changesPerPush || !strings.Contains(err.Error(), "site store "+store.Where()) {
		t.Fatalf("cut short: sent %d, %v; want the first batch (%d) and an error naming the store", sent, err, changesPerPush)
	}
	var jobs int
	store.DB().QueryRow("SELECT count(*) FROM jobs").Scan(&jobs)
	if left, _ := h.OutboxLen(ctx); left != total-changesPerPush || jobs != changesPerPush {
		t.Errorf("after the cut: %d jobs in the store, %d changes waiting; want %d and %d", jobs, left, changesPerPush, total-changesPerPush)
	}
	testHookInBatch = nil
	if rest, err := store.Push(ctx, h, nil); err != nil || rest != total-changesPerPush {
		t.Fatalf("the next push: %d, %v", rest, err)
	}
	sameTables(t, "after the next push", tableText(t, store.DB(), quote), sqliteText(t, path))
}

// PushWhile sends what the import commits while it runs, then the rest:
// the store ends with the history whole; an import that fails says so
// first, and what it committed has gone to the store.
func TestMariaDBPushWhileImporting(t *testing.T) {
	ctx := context.Background()
	store, err := Open(ctx, testStore(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	h, path := collectorHistory(t, store, 0)
	steps := 0
	sent, err := store.PushWhile(ctx, h, func() error {
		for ; steps < 4; steps++ {
			importJobs(t, h, sacctgen.FirstJobID+steps*5000, 5000)
			time.Sleep(3 * pushWhilePause)
		}
		return nil
	}, nil)
	if err != nil || sent < 20000 {
		t.Fatalf("sent %d: %v", sent, err)
	}
	sameTables(t, "after importing and pushing together", tableText(t, store.DB(), quote), sqliteText(t, path))
	failed := errors.New("sacct failed")
	_, err = store.PushWhile(ctx, h, func() error {
		importJobs(t, h, sacctgen.FirstJobID+50000, 100)
		return failed
	}, nil)
	var jobs int
	store.DB().QueryRow("SELECT count(*) FROM jobs").Scan(&jobs)
	if !errors.Is(err, failed) || jobs != 20100 {
		t.Errorf("an import that failed: %v, %d jobs in the store (want its 100 sent too: 20100)", err, jobs)
	}
}

// Two pushes from one history at once (two collects that overlap, each
// sending what it imports): one reads a batch, the other overtakes it
// with a newer version of a row of it, and the first then writes its
// older one. The store kept the older row while the outbox, emptied by
// both, held nothing to mend it: a stale row until the job changed
// again. Pushes from one history take turns (a lock beside it), so the
// store ends with the history's rows.
func TestMariaDBTwoPushesAtOnce(t *testing.T) {
	ctx := context.Background()
	opt := testStore(t)
	first, err := Open(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := Open(ctx, opt) // the other collect's connection
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	h, path := collectorHistory(t, first, 10)
	if _, err := first.Push(ctx, h, nil); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	job := strconv.Itoa(sacctgen.FirstJobID)
	setState := func(state string) {
		t.Helper()
		if _, err := raw.Exec(`UPDATE jobs SET state = ? WHERE job_key = ?`, state, job); err != nil {
			t.Fatal(err)
		}
	}
	setState("FAILED") // what the first push reads
	var hooked atomic.Bool
	overtaken := make(chan error, 1)
	testHookBeforeApply = func() {
		if hooked.Swap(true) {
			return // the second push's
		}
		func() {
			// This push reads ahead: its next read, which finds nothing
			// more, done before the row changes.
			time.Sleep(200 * time.Millisecond)
			setState("COMPLETED") // the other collect's import, then its push
			go func() {
				_, err := second.Push(ctx, h, nil)
				overtaken <- err
			}()
			select {
			case err := <-overtaken: // it overtook this one
				overtaken <- err
			case <-time.After(2 * time.Second): // it waits for this one
			}
		}()
	}
	defer func() { testHookBeforeApply = nil }()
	if _, err := first.Push(ctx, h, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-overtaken; err != nil {
		t.Fatal(err)
	}
	testHookBeforeApply = nil
	var state string
	first.DB().QueryRow("SELECT state FROM jobs WHERE job_key = ?", job).Scan(&state)
	if left, _ := h.OutboxLen(ctx); state != "COMPLETED" {
		t.Errorf("job %s is %s in the store, %d changes waiting to mend it; the history says COMPLETED", job, state, left)
	}
	sameTables(t, "after two pushes at once", tableText(t, first.DB(), quote), sqliteText(t, path))
}
