package index

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
)

// carol's sweep.sh completed on 1g.10gb (twice) and on the whole GPU; her
// once.sh only on the whole GPU.
const peersDump = `JobIDRaw|JobID|Cluster|User|Account|State|ExitCode|Submit|Start|End|ElapsedRaw|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName
21|21|migdev|carol|physics|COMPLETED|0:0|2026-11-20T01:00:00|2026-11-20T01:00:05|2026-11-20T01:05:05|300|1|4|16G|cpu=4,gres/gpu:a100_10g=1,gres/gpu=1,mem=16G,node=1|sweep
22|22|migdev|carol|physics|COMPLETED|0:0|2026-11-20T02:00:00|2026-11-20T02:00:05|2026-11-20T02:07:05|420|1|4|16G|cpu=4,gres/gpu:a100_10g=1,gres/gpu=1,mem=16G,node=1|sweep
23|23|migdev|carol|physics|COMPLETED|0:0|2026-11-20T03:00:00|2026-11-20T03:00:05|2026-11-20T03:01:05|60|1|4|16G|cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1|sweep
24|24|migdev|carol|physics|COMPLETED|0:0|2026-11-20T04:00:00|2026-11-20T04:00:05|2026-11-20T04:01:05|60|1|4|16G|cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1|once
`

// An index keeps the scripts measured on two profiles or more as peers,
// the median per profile and no name; the user's index and the site's
// holding the same script count it once, and an index written before
// peers has none.
func TestIndexPeers(t *testing.T) {
	ctx := context.Background()
	site := catalogtest.Wulver(t)
	st := historytest.FromDump(t, site, peersDump)
	dir := t.TempDir()
	sweep := catalogtest.WriteScript(t, filepath.Join(dir, "sweep.sh"), "#!/bin/bash\npython sweep.py\n")
	once := catalogtest.WriteScript(t, filepath.Join(dir, "once.sh"), "#!/bin/bash\npython once.py\n")
	var subs []history.Submission
	for id, fp := range map[string]string{"21": sweep.Fingerprint(), "22": sweep.Fingerprint(), "23": sweep.Fingerprint(), "24": once.Fingerprint()} {
		subs = append(subs, history.Submission{Cluster: "migdev", JobID: id, Fingerprint: fp, Source: "/s.sh", Script: "/s.sh", Submitted: time.Now()})
	}
	if err := st.RecordSubmissions(ctx, subs); err != nil {
		t.Fatal(err)
	}
	pub, err := Publish(ctx, st, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if pub.Peers != 1 {
		t.Errorf("published %+v, want one peer (sweep.sh)", pub)
	}
	r, err := Open(pub.Index)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	peers, err := r.Peers()
	if err != nil || len(peers) != 1 || peers[0].Peer["1g.10gb"] != 360 || peers[0].Peer["full"] != 60 || len(peers[0].Peer) != 2 {
		t.Fatalf("peers %+v %v, want sweep.sh's 360 s on 1g.10gb (the median of 300 and 420) and 60 s on full", peers, err)
	}

	// The user's own index holds the same script: PeersBeside counts it once,
	// and a script is never its own peer.
	if _, err := Refresh(ctx, st.Path()); err != nil {
		t.Fatal(err)
	}
	withSite := *site
	withSite.History = catalog.History{SiteIndex: pub.Index}
	both, err := PeersBeside(st.Path(), &withSite)
	if err != nil || len(both) != 1 || len(both.Except(once.Fingerprint())) != 1 || len(both.Except(sweep.Fingerprint())) != 0 {
		t.Errorf("own and site: %d peers, %v", len(both), err)
	}

	// A site index that will not open, or whose peers' entry is damaged, is
	// said, naming it, beside the own index's peers.
	entries, _, err := Build(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, "damaged.idx")
	entries[peersKey] = []byte(`{"peers": [{"k": "x", "p": ["full"], "s": []}]}`)
	if err := WriteFile(damaged, entries); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.idx")
	if err := os.WriteFile(bad, []byte("not an index"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bad, damaged} {
		withSite.History.SiteIndex = path
		if got, err := PeersBeside(st.Path(), &withSite); err == nil || len(got) != 1 || !strings.Contains(err.Error(), path) {
			t.Errorf("with %s as the site's index: %d peers, %v", filepath.Base(path), len(got), err)
		}
	}

	// An index without the peers' entry (an earlier build's) has none.
	delete(entries, peersKey)
	old := filepath.Join(dir, "old.idx")
	if err := WriteFile(old, entries); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(old)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if got, err := ro.Peers(); err != nil || len(got) != 0 {
		t.Errorf("an index without peers: %v %v", got, err)
	}
}

// Any bytes in the peers' entry are read or refused, never a panic or a
// huge allocation; what reads writes back the same.
func FuzzDecodePeers(f *testing.F) {
	good, err := encodePeers([]runmodel.DatedPeer{{Script: peerKey("a"), At: 7, Peer: runmodel.Peer{"1g.10gb": 360, "full": 60}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add([]byte{0, 0, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		peers, err := decodePeers(data)
		if err != nil {
			return
		}
		again, err := encodePeers(peers)
		if err != nil {
			return // a peer the writer would not write (a key of another size)
		}
		back, err := decodePeers(again)
		if err != nil || !reflect.DeepEqual(back, peers) {
			t.Errorf("%v read back as %v (%v)", peers, back, err)
		}
	})
}
