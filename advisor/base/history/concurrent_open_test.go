package history

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// Many processes opening a history that does not exist yet race to create
// it, turn on WAL and migrate it: none may fail. (Two connections turning
// on WAL at once deadlock in SQLite, and one is refused at once, whatever
// the busy timeout.)
func TestConcurrentFirstOpens(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for round := range 30 {
		path := filepath.Join(dir, fmt.Sprint(round), "history.db")
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := Open(ctx, path)
				if err != nil {
					errs <- err
					return
				}
				errs <- s.Close()
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
