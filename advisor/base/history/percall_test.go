package history

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestPerCallOpensForEachCallAndCloses(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "h.db")
	var open []*Store
	opener := func(ctx context.Context) (*Store, error) {
		st, err := Open(ctx, db)
		open = append(open, st)
		return st, err
	}
	h := PerCall{Write: opener, Read: opener}
	sub := Submission{Cluster: "wulver", JobID: "41", Fingerprint: "fp", Source: "/w/job.sh", Script: "/w/job.sh",
		Profile: "1g.10gb", WorkDir: "/w", Submitted: time.Now()}
	if err := h.RecordSubmissions(ctx, []Submission{sub}); err != nil {
		t.Fatal(err)
	}
	got, err := h.Tracked(ctx, TrackedFilter{JobIDs: []string{"41"}})
	if err != nil || len(got) != 1 || got[0].Profile != "1g.10gb" {
		t.Fatalf("Tracked = %+v, %v; want the submission recorded by the call before", got, err)
	}
	if len(open) != 2 {
		t.Fatalf("%d opens for 2 calls", len(open))
	}
	for i, st := range open {
		if _, err := st.Tracked(ctx, TrackedFilter{}); err == nil {
			t.Errorf("store %d still open after its call", i)
		}
	}
}

func TestPerCallSaysWhyItCannotOpen(t *testing.T) {
	refused := errors.New("read-only file system")
	h := PerCall{Write: func(context.Context) (*Store, error) { return nil, refused },
		Read: func(context.Context) (*Store, error) { return nil, refused }}
	if err := h.RecordSweep(context.Background(), Sweep{Dir: "/w/sweep"}); !errors.Is(err, refused) {
		t.Errorf("RecordSweep = %v; want the open's error", err)
	}
	if _, err := h.History(context.Background(), HistoryFilter{}); !errors.Is(err, refused) {
		t.Errorf("History = %v; want the open's error", err)
	}
}
