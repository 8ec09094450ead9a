package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/app/index"
)

// collect --publish DIR publishes what it collected: the snapshot and the
// index, world-readable, and says so; publish alone does the same; a
// directory that is not there is refused, and nothing is created.
func TestCollectPublishes(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "live.db"))
	t.Setenv("MIGADVISOR_CLUSTER", "local")
	dump := filepath.Join(t.TempDir(), "sacct.psv")
	os.WriteFile(dump, []byte("JobIDRaw|JobID|State|ElapsedRaw|AllocTRES|JobName|User\n"+
		"5|5|COMPLETED|30|cpu=1,mem=4G,gres/gpu:a100=1|train|alice\n"), 0o644)
	shared := t.TempDir()
	text, errOut, code := migadvisor(t, "collect", "--sacct-file", dump, "--publish", shared, "--json")
	var rep collect.Summary
	if err := json.Unmarshal([]byte(text), &rep); code != 0 || err != nil || rep.Published == nil {
		t.Fatalf("exit %d, %v: %s%s", code, err, text, errOut)
	}
	for _, name := range []string{index.SnapshotName, index.IndexName} {
		info, err := os.Stat(filepath.Join(shared, name))
		if err != nil || info.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v %v", name, info, err)
		}
	}
	if r, err := index.Open(filepath.Join(shared, index.IndexName)); err != nil {
		t.Errorf("the index: %v", err)
	} else {
		r.Close()
	}
	text, errOut, code = migadvisor(t, "publish", shared)
	if code != 0 || !strings.HasPrefix(text, "published "+filepath.Join(shared, index.SnapshotName)+" and ") {
		t.Errorf("publish: exit %d: %s%s", code, text, errOut)
	}
	missing := filepath.Join(shared, "typo")
	if _, errOut, code = migadvisor(t, "publish", missing); code != 1 || !strings.Contains(errOut, missing+" is not a directory") {
		t.Errorf("a missing directory: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("publish created the mistyped directory")
	}
	// collect --publish into a missing directory refuses before importing.
	dump2 := filepath.Join(t.TempDir(), "more.psv")
	os.WriteFile(dump2, []byte("JobIDRaw|JobID|State|ElapsedRaw|AllocTRES|JobName|User\n6|6|COMPLETED|30|cpu=1,mem=4G,gres/gpu:a100=1|train|alice\n"), 0o644)
	if _, errOut, code = migadvisor(t, "collect", "--sacct-file", dump2, "--publish", missing); code != 1 || !strings.Contains(errOut, "is not a directory") {
		t.Errorf("collect --publish into a missing directory: exit %d: %s", code, errOut)
	}
	if text, _, _ = migadvisor(t, "history", "--json"); strings.Contains(text, `"job_id": "6"`) {
		t.Error("collect imported before refusing the directory to publish in")
	}
	// Publishing into the live history's own directory would replace it.
	home := t.TempDir()
	live := filepath.Join(home, index.SnapshotName) // the default name, history.db
	if _, errOut, code = migadvisor(t, "--db", live, "collect", "--sacct-file", dump); code != 0 {
		t.Fatal(errOut)
	}
	if _, errOut, code = migadvisor(t, "--db", live, "publish", home); code != 1 || !strings.Contains(errOut, "is the history being published") {
		t.Errorf("publishing over the live history: exit %d: %s", code, errOut)
	}
	if info, err := os.Stat(live); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the live history after: %v %v", info, err)
	}
	// The snapshot is a history any host reads, read-only.
	t.Setenv("MIGADVISOR_DB", filepath.Join(shared, index.SnapshotName))
	if text, errOut, code = migadvisor(t, "history", "--json"); code != 0 || !strings.Contains(text, `"job_id": "5"`) {
		t.Errorf("reading the snapshot: exit %d: %s%s", code, text, errOut)
	}
	head := make([]byte, 20)
	f, _ := os.Open(filepath.Join(shared, index.SnapshotName))
	f.ReadAt(head, 0)
	f.Close()
	if head[18] != 1 {
		t.Errorf("reading the snapshot made it a live history (WAL): %v", head[18:20])
	}
}

// A user's collect rewrites their advice index (the wrapper reads it); a
// site-wide one (--all-users, --publish) writes none: its index is the
// published one.
func TestCollectWritesTheUsersIndex(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	t.Setenv("MIGADVISOR_CLUSTER", "local")
	dump := filepath.Join(t.TempDir(), "sacct.psv")
	os.WriteFile(dump, []byte("JobIDRaw|JobID|State|ElapsedRaw|AllocTRES|JobName|User\n"+
		"5|5|COMPLETED|30|cpu=1,mem=4G,gres/gpu:a100=1|train|alice\n"), 0o644)
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", dump, "--publish", t.TempDir()); code != 0 {
		t.Fatal(errOut)
	}
	if _, err := os.Stat(index.OwnPath(db)); err == nil {
		t.Error("a publishing collect wrote a private index of the history")
	}
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", dump); code != 0 {
		t.Fatal(errOut)
	}
	info, err := os.Stat(index.OwnPath(db))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the user's index: %v %v", info, err)
	}
}
