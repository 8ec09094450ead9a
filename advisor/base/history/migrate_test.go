//go:build cgo

package history

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// A new history is migrated under a lock file beside it, which goes with
// the lock: none is left beside the database, even when several processes
// open it at once.
func TestMigrationLeavesNoLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(context.Background(), path)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path + ".migrating"); !os.IsNotExist(err) {
		t.Errorf("a lock file is left beside the history: %v", err)
	}
}
