package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// history names what it read when it lists nothing: a history with no
// jobs yet, or no file at all at the path given (a mistyped --db reads as
// empty, and must not read as a history that collect has not filled).
func TestHistoryOfNoJobsSaysWhetherTheFileExists(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "nonexistent", "history.db")
	out, _, code := migadvisor(t, "--db", missing, "history")
	if code != 0 || !strings.Contains(out, missing+" yet (no such file)") || !strings.Contains(out, "check the path") {
		t.Errorf("a --db with no file: exit %d, %q", code, out)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Errorf("reading a history that is not there made its directory: %v", err)
	}
	db := filepath.Join(dir, "history.db")
	empty := filepath.Join(dir, "empty.psv")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := migadvisor(t, "--db", db, "collect", "--sacct-file", empty, "--cluster", "migdev"); code != 0 {
		t.Fatalf("collect: exit %d, %s", code, errOut)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("collect made no history: %v", err)
	}
	out, _, code = migadvisor(t, "--db", db, "history")
	if code != 0 || strings.Contains(out, "no such file") || !strings.Contains(out, "the history at "+db+" yet") {
		t.Errorf("an empty history: exit %d, %q", code, out)
	}
}
