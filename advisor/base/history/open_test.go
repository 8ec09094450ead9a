package history

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A command that only reads gets an empty history, and why, where none
// exists and none can be created; it reads the history where there is one.
func TestOpenToReadWithoutAPlaceForTheHistory(t *testing.T) {
	ctx := context.Background()
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o600)
	path := filepath.Join(blocker, "migadvisor", "history.db")
	st, absent, err := OpenToRead(ctx, path)
	if err != nil || absent == nil || st == nil {
		t.Fatalf("OpenToRead under a file: %v, %v, %v", st, absent, err)
	}
	defer st.Close()
	if absent.Path != path || !strings.Contains(absent.Error(), "none can be created there") {
		t.Errorf("absent: %v", absent)
	}
	if recs, err := st.History(ctx, HistoryFilter{}); err != nil || len(recs) != 0 || st.Path() != path {
		t.Errorf("the empty history: %d jobs, %v, path %s", len(recs), err, st.Path())
	}
	if _, err := os.Stat(blocker + "/migadvisor"); err == nil {
		t.Error("created something")
	}

	good := filepath.Join(t.TempDir(), "migadvisor", "history.db")
	st2, absent, err := OpenToRead(ctx, good)
	if err != nil || absent != nil {
		t.Fatalf("a history that can be made: %v %v", absent, err)
	}
	st2.Close()
	// A read of no history creates none, nor its directory.
	if _, err := os.Stat(filepath.Dir(good)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a read of no history created %s: %v", filepath.Dir(good), err)
	}
	// Submissions spooled on their way into it are the user's history:
	// a read lists them, and leaves them in the spool, the history unmade.
	if _, err := SpoolFor(good).Put(Submission{Cluster: "c", JobID: "7", Fingerprint: "fp", Source: "/job.sh", Script: "/job.sh"}); err != nil {
		t.Fatal(err)
	}
	st3, absent, err := OpenToRead(ctx, good)
	if err != nil || absent != nil {
		t.Fatalf("a spooled record: %v %v", absent, err)
	}
	defer st3.Close()
	if tr, err := st3.Tracked(ctx, TrackedFilter{}); err != nil || len(tr) != 1 {
		t.Errorf("the spooled record was not read: %+v %v", tr, err)
	}
	if _, err := os.Stat(good); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a read of spooled records made the history: %v", err)
	}
	if left, _ := SpoolFor(good).Pending(); len(left) != 1 {
		t.Errorf("the spool after a read: %v", left)
	}
}

// schema7History is a history as a migadvisor of schema 7 (oldestReadable)
// left it, with train.sh's jobs and two submissions, its -wal and -shm
// files gone with its last connection.
func schema7History(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	w, err := OpenWith(ctx, path, Options{BusyTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Filled as the older one did (its tables are the same), then the later
	// tables dropped and the schema put back.
	importAs(t, w, "migdev", noClusterDump)
	if err := w.RecordSubmissions(ctx, []Submission{{Cluster: "migdev", JobID: "4242", Fingerprint: "fp", Source: "/u/train.sh", Submitted: time.Unix(1000, 0)},
		{Cluster: "migdev", JobID: "4243", Fingerprint: "old", Source: "/u/train.sh", Submitted: time.Unix(1001, 0)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.Exec(`DROP TABLE settings; DROP TABLE script_names; DROP INDEX scripts_by_path; DROP INDEX submissions_made_here;
		DROP TABLE pending_submissions; DROP TABLE emulated_runs; PRAGMA user_version = 7`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return path
}

// filesUnder is every file under dir with its bytes' hash.
func filesUnder(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	files := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		files[p] = sha256.Sum256(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// A read of a history of an older schema reads it as it is and writes
// nothing: not its file, nor the spooled submissions beside it, which it
// lists without moving them in.
func TestReadOfAnOldSchemaWritesNothing(t *testing.T) {
	ctx := context.Background()
	path := schema7History(t)
	spool := SpoolFor(path)
	if _, err := spool.Put(Submission{JobID: "4300", Fingerprint: "fp", Source: "/u/train.sh", Script: "/u/train.sh", Submitted: time.Unix(2000, 0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := spool.Put(Submission{Fingerprint: "fp", JobName: "train.sh", User: "u", Token: "t1", Source: "/u/train.sh", Submitted: time.Unix(2001, 0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := spool.Put(Submission{JobID: "4242", Fingerprint: "fp", Source: "/u/train.sh", Submitted: time.Unix(1000, 0)}); err != nil {
		t.Fatal(err) // one drained before, and put again
	}
	os.WriteFile(filepath.Join(spool.Dir, "9-9.json"), []byte("not json"), 0o600)
	before := filesUnder(t, filepath.Dir(path))

	st, absent, err := OpenToRead(ctx, path)
	if err != nil || absent != nil {
		t.Fatalf("OpenToRead: %v %v", absent, err)
	}
	if v, err := st.Version(ctx); err != nil || v != 7 {
		t.Errorf("read as schema %d %v, want 7 as it is", v, err)
	}
	if recs, err := st.History(ctx, HistoryFilter{Fingerprint: "fp", Versions: &Versions{Path: "/u/train.sh", JobNames: []string{"train.sh"}}}); err != nil || len(recs) != 2 {
		t.Errorf("history: %v %v", jobIDs(recs), err)
	}
	tr, err := st.Tracked(ctx, TrackedFilter{})
	var ids []string
	for _, x := range tr {
		ids = append(ids, x.JobID)
	}
	if err != nil || strings.Join(ids, " ") != "4242 4243 4300" {
		t.Errorf("tracked %v %v, want the history's two and the spooled one", ids, err)
	}
	if tr, err := st.Tracked(ctx, TrackedFilter{JobIDs: []string{"4300"}}); err != nil || len(tr) != 1 || tr[0].Source != "/u/train.sh" || len(tr[0].Jobs) != 0 {
		t.Errorf("tracked 4300: %+v %v", tr, err)
	}
	if tr, err := st.Tracked(ctx, TrackedFilter{Fingerprint: "old"}); err != nil || len(tr) != 1 || tr[0].JobID != "4243" {
		t.Errorf("tracked of old: %+v %v", tr, err)
	}
	if len(st.SetAside()) != 0 {
		t.Errorf("a read set aside %v", st.SetAside())
	}
	st.Close()

	after := filesUnder(t, filepath.Dir(path))
	if !maps.Equal(before, after) {
		t.Errorf("a read changed the files beside the history:\nbefore %v\nafter  %v", slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after)))
	}
}

// A history older than this build reads is one sentence that names it and
// says what to run; the read leaves it as it was.
func TestReadOfATooOldSchemaSaysWhatToRun(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "my history.db")
	db, err := sql.Open("sqlite3", path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:oldestReadable-1] {
		if _, err := db.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", oldestReadable-1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before := filesUnder(t, filepath.Dir(path))
	_, _, err = OpenToRead(ctx, path)
	var old *OldSchemaError
	want := fmt.Sprintf("the history %s is of schema 6, older than this migadvisor reads (7 and later): run 'migadvisor collect --db '%s'' once", path, path)
	if !errors.As(err, &old) || old.Version != oldestReadable-1 || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %v\nwant %s…", err, want)
	}
	if after := filesUnder(t, filepath.Dir(path)); !maps.Equal(before, after) {
		t.Error("a read of a too old history changed it")
	}
}

// A damaged history is one sentence that names the file and says how to
// recover, from every way of opening it.
func TestCorruptHistoryNamesTheFileAndTheWayOut(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	os.WriteFile(path, []byte(strings.Repeat("this is not a database. ", 10)), 0o600)
	_, errRW := Open(ctx, path)
	_, errRO := OpenWith(ctx, path, Options{ReadOnly: true})
	_, _, errRead := OpenToRead(ctx, path)
	for name, err := range map[string]error{"read-write": errRW, "read-only": errRO, "to read": errRead} {
		var corrupt *CorruptError
		if !errors.As(err, &corrupt) || corrupt.Path != path {
			t.Errorf("%s: %v", name, err)
			continue
		}
		msg := err.Error()
		if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "mv "+path+" "+path+".broken") || !strings.Contains(msg, "migadvisor collect") {
			t.Errorf("%s: %q", name, msg)
		}
	}
}

// A history being made (its file there, its first migration not committed
// yet, by a collect under way) is read as an empty one, not as too old.
func TestReadOfAHistoryBeingMadeFindsNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA journal_mode=WAL"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, absent, err := OpenToRead(ctx, path)
	if err != nil || absent != nil {
		t.Fatalf("OpenToRead: %v %v", absent, err)
	}
	defer st.Close()
	if recs, err := st.History(ctx, HistoryFilter{}); err != nil || len(recs) != 0 {
		t.Errorf("history: %d jobs, %v", len(recs), err)
	}
}
