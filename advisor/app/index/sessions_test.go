package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/advisor/base/session"
	"github.com/migadvisor/migadvisor/catalog"
)

const sessionDump = "JobIDRaw|JobID|Cluster|User|State|ExitCode|Submit|Start|End|NNodes|AllocCPUS|ReqMem|AllocTRES|TRESUsageInMax|JobName|Partition\n"

// sessionRow is a session of one GPU of gres type gpu held two hours,
// with its step's gres/gpumem peak ("" for none).
func sessionRow(id int, user, name, gpu, gpumem string) string {
	day := fmt.Sprintf("2026-11-%02dT", 1+id%28)
	times := "|" + day + "09:00:00|" + day + "09:01:00|" + day + "11:01:00|1|2|8G|"
	job := fmt.Sprintf("%d|%d|wulver|%s|TIMEOUT|0:0%scpu=2,gres/gpu:%s=1,gres/gpu=1,mem=8G,node=1||%s|gpu\n", id, id, user, times, gpu, name)
	if gpumem == "" {
		return job
	}
	return job + fmt.Sprintf("%d.0|%d.0|wulver|%s|CANCELLED|0:15%scpu=2,gres/gpu=1,mem=8G,node=1|gres/gpu=1,gres/gpumem=%s|bash|gpu\n",
		id, id, user, times, gpumem)
}

// A user's own index keeps their sessions by user and job name, the newest
// session.DefaultLast of each, which judge as the history's do; a site's
// index keeps none, and no name of them.
func TestSessionsInAUsersIndexOnly(t *testing.T) {
	ctx := context.Background()
	site, _ := catalog.Builtin("wulver")
	dump := sessionDump
	for i := 1; i <= 12; i++ {
		dump += sessionRow(i, "alice", "jupyter", "a100", "3000M")
	}
	dump += sessionRow(20, "alice", "unmeasured-name", "a100_10g", "") + sessionRow(21, "bob", "jupyter", "a100", "70000M")
	st := historytest.FromDump(t, site, dump)
	entries, stats, err := Build(ctx, st, Options{Private: true})
	if err != nil || stats.Sessions != 3 {
		t.Fatalf("built %+v, %v", stats, err)
	}
	path := filepath.Join(t.TempDir(), "own.idx")
	if err := WriteFile(path, entries); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	kept, ok, err := r.Sessions("alice", "jupyter")
	if !ok || err != nil || len(kept.Sessions) != session.DefaultLast || kept.Sessions[0].JobID != "12" {
		t.Fatalf("alice's jupyter: %v %v %+v", ok, err, kept)
	}
	recs, err := st.History(ctx, history.HistoryFilter{Named: []history.UserJobName{{User: "alice", Name: "jupyter"}}})
	if err != nil {
		t.Fatal(err)
	}
	req := session.Request{Name: "jupyter", User: "alice", Site: site}
	if got, want := session.Judge(req, kept.Records("alice", "jupyter")), session.Judge(req, recs); got.Help != want.Help || got.Help == "" {
		t.Errorf("from the index %q, from the history %q", got.Help, want.Help)
	}
	if kept, _, _ := r.Sessions("bob", "jupyter"); len(kept.Sessions) != 1 || kept.Sessions[0].JobID != "21" {
		t.Errorf("bob's jupyter: %+v", kept)
	}
	for _, who := range [][2]string{{"alice", "unknown"}, {"carol", "jupyter"}} {
		if _, ok, err := r.Sessions(who[0], who[1]); ok || err != nil {
			t.Errorf("%s's %s: %v %v", who[0], who[1], ok, err)
		}
	}

	pub, err := Publish(ctx, st, t.TempDir())
	if err != nil || pub.Sessions != 0 {
		t.Fatalf("published %+v, %v", pub, err)
	}
	data, _ := os.ReadFile(pub.Index)
	for _, secret := range []string{"alice", "bob", "jupyter", "unmeasured-name"} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("the site's index holds %q", secret)
		}
	}
	siteIndex, err := Open(pub.Index)
	if err != nil {
		t.Fatal(err)
	}
	defer siteIndex.Close()
	if _, ok, err := siteIndex.Sessions("alice", "jupyter"); ok || err != nil {
		t.Errorf("the site's index has alice's sessions: %v %v", ok, err)
	}
}

// An index of version 1 (before sessions) is still read, with no sessions,
// and a refresh rewrites a user's own at this version though the history
// did not change since.
func TestVersion1IsReadAndRefreshed(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "history.db")
	st, err := history.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if wrote, err := Refresh(ctx, db); !wrote || err != nil {
		t.Fatalf("refresh: %v %v", wrote, err)
	}
	own := OwnPath(db)
	data, _ := os.ReadFile(own)
	binary.LittleEndian.PutUint32(data[8:], 1)
	if err := os.WriteFile(own, data, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(own)
	if err != nil || r.Version() != 1 {
		t.Fatalf("version 1: %v", err)
	}
	if _, ok, err := r.Sessions("alice", "jupyter"); ok || err != nil {
		t.Errorf("sessions of version 1: %v %v", ok, err)
	}
	r.Close()
	if wrote, err := Refresh(ctx, db); !wrote || err != nil {
		t.Fatalf("refresh of version 1: %v %v", wrote, err)
	}
	if r, err := Open(own); err != nil || r.Version() != Version {
		t.Errorf("after a refresh: %v", err)
	} else {
		r.Close()
	}
	if wrote, err := Refresh(ctx, db); wrote || err != nil {
		t.Errorf("refresh of an index up to date: %v %v", wrote, err)
	}
}
