package history

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	// they are moved in, and so it is made.
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
