package index

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// A refresh that rewrites the user's index removes the sbatch filter's
// cache of answers made of the one it replaces; one that has nothing to
// rewrite keeps it.
func TestRefreshRemovesFilterCache(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "history.db")
	st, err := history.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	cache := FilterCachePath(db)
	if filepath.Dir(cache) != filepath.Dir(OwnPath(db)) {
		t.Errorf("the cache %s is not beside the index %s", cache, OwnPath(db))
	}
	os.WriteFile(cache, []byte("answers"), 0o600)
	if wrote, err := Refresh(ctx, db); !wrote || err != nil {
		t.Fatalf("refresh: %v %v", wrote, err)
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Errorf("the cache outlived the index: %v", err)
	}
	os.WriteFile(cache, []byte("answers"), 0o600)
	if wrote, err := Refresh(ctx, db); wrote || err != nil {
		t.Fatalf("refresh of an index up to date: %v %v", wrote, err)
	}
	if _, err := os.Stat(cache); err != nil {
		t.Errorf("the cache of the index still there: %v", err)
	}
}

// The clock set back after the user's index was written: the history
// changed since holds an earlier time than the index, which looked up to
// date until the clock caught up with it (the wrapper advised from old
// runs for as long). An index written after now is stale.
func TestRefreshAfterTheClockMovedBack(t *testing.T) {
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
	ahead := time.Now().Add(24 * time.Hour) // written on a clock a day ahead
	os.Chtimes(OwnPath(db), ahead, ahead)
	now := time.Now()
	os.Chtimes(db, now, now) // a collect since, the clock set right
	if wrote, err := Refresh(ctx, db); !wrote || err != nil {
		t.Fatalf("refresh of an index written ahead of the clock: %v %v", wrote, err)
	}
	if info, err := os.Stat(OwnPath(db)); err != nil || info.ModTime().After(time.Now()) {
		t.Errorf("the index: %v %v", info.ModTime(), err)
	}
}
