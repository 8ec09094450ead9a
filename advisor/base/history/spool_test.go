package history

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSpoolDrainsIntoTheHistoryOnceAndKeepsWhatItCannotRead(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "history.db")
	sp := SpoolFor(db)
	var files []string
	for _, id := range []string{"11", "12"} {
		f, err := sp.Put(Submission{Cluster: "c", JobID: id, Fingerprint: "fp", Source: "/job.sh", Script: "/job.sh", Submitted: time.Unix(1_790_000_000, 0)})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if st, err := os.Stat(files[0]); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("spooled record: %v %v", st.Mode(), err)
	}
	bad := filepath.Join(sp.Dir, "1-1.json")
	os.WriteFile(bad, []byte("{half a rec"), 0o600)
	// A record a wrapper (or the cli_filter) was killed writing: the
	// temporary file it writes first, never renamed, is no record.
	unfinished := []string{filepath.Join(sp.Dir, ".3-3.json.tmp123"), filepath.Join(sp.Dir, ".4000000000-77.json.tmp")}
	for _, f := range unfinished {
		os.WriteFile(f, []byte(`{"Cluster":"c","JobID":"99","Fing`), 0o600)
	}
	// A copy of a record already drained, as after a crash between the
	// commit and the removal: recording it again changes nothing.
	data, _ := os.ReadFile(files[0])
	os.WriteFile(filepath.Join(sp.Dir, "2-2.json"), data, 0o600)

	st, err := Open(ctx, db) // Open drains
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tr, err := st.Tracked(ctx, TrackedFilter{})
	if err != nil || len(tr) != 2 {
		t.Fatalf("tracked %+v %v", tr, err)
	}
	if pending, _ := sp.Pending(); len(pending) != 0 {
		t.Errorf("left in the spool: %v", pending)
	}
	if _, err := os.Stat(bad + ".bad"); err != nil {
		t.Errorf("the unreadable record was not kept: %v", err)
	}
	for _, f := range unfinished {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("an unfinished record was taken for one: %v", err)
		}
	}
	// The open that set it aside says which and why, for its command to tell.
	if aside := st.SetAside(); len(aside) != 1 || aside[0].File != bad+".bad" ||
		!strings.HasPrefix(aside[0].Reason, "not a record of the sbatch wrapper's: ") {
		t.Errorf("set aside: %+v", aside)
	}
	if n, err := st.DrainSpool(ctx); n != 0 || err != nil || len(st.SetAside()) != 1 {
		t.Errorf("second drain: %d %v, set aside %+v", n, err, st.SetAside())
	}
	// Once: the next open finds nothing to set aside.
	again, err := Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if aside := again.SetAside(); len(aside) != 0 {
		t.Errorf("set aside again: %+v", aside)
	}
}

func TestReadOnlyOpenWritesNothing(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "history.db")
	if _, err := OpenWith(ctx, db, Options{ReadOnly: true}); err == nil {
		t.Error("read-only open created a history")
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("read-only open left a file")
	}
	st, err := Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	ro, err := OpenWith(ctx, db, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.RecordSubmissions(ctx, []Submission{{Cluster: "c", JobID: "1", Fingerprint: "fp"}}); err == nil {
		t.Error("a read-only history took a write")
	}
}
