package history

import (
	"context"
	"database/sql"
	"fmt"
)

// An import's writer would copy its pages from the WAL into the database
// itself every 1000 pages (SQLite's automatic checkpoint): a read and a
// write a page, and the syncs, on the writer's thread, a seventh of its
// time. Beside a large import, a second connection does it
// (checkpointBeside) while the writer goes on, on the core the reader
// leaves free; the writer's own checkpoint stays, at importAutocheckpoint,
// for whatever the other could not copy (a reader holding old pages).
// Which connection copies a page changes nothing of what is stored, nor
// what a kill at any moment leaves: the WAL holds every commit until it
// is copied.

// The checkpoints beside an import: a passive one every checkpointEvery
// batches committed (10,000 jobs, 2-3 MB of WAL), the writer's own when
// the WAL holds importAutocheckpoint bytes of pages (no more than it grows
// while the index of names is built), whatever the history's page size.
const (
	checkpointEvery      = 2
	importAutocheckpoint = 16 << 20
)

// walCheckpointer checkpoints beside an import; its zero value does
// nothing.
type walCheckpointer struct {
	kick    chan struct{}
	done    chan struct{}
	batches int
	restore func()
}

// checkpointBeside starts checkpointing beside the import that writer
// writes, until stop. A history limited to one connection (in memory, or
// a test's) checkpoints as it writes.
func (s *Store) checkpointBeside(ctx context.Context, writer *sql.Conn) (*walCheckpointer, error) {
	c := &walCheckpointer{}
	if s.inMemory || s.db.Stats().MaxOpenConnections != 0 {
		return c, nil
	}
	var was int
	if err := writer.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&was); err != nil {
		return nil, err
	}
	var page int
	if err := writer.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&page); err != nil {
		return nil, err
	}
	if _, err := writer.ExecContext(ctx, fmt.Sprintf(`PRAGMA wal_autocheckpoint = %d`, importAutocheckpoint/max(page, 512))); err != nil {
		return nil, err
	}
	c.restore = func() {
		writer.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA wal_autocheckpoint = %d`, was))
	}
	c.kick, c.done = make(chan struct{}, 1), make(chan struct{})
	go func() {
		defer close(c.done)
		for range c.kick {
			// What a passive checkpoint cannot copy now, the next one does,
			// or the writer's own.
			s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
		}
	}()
	return c, nil
}

// committed tells the checkpointer a batch was committed.
func (c *walCheckpointer) committed() {
	if c.kick == nil {
		return
	}
	if c.batches++; c.batches%checkpointEvery == 0 {
		select {
		case c.kick <- struct{}{}:
		default: // one is under way
		}
	}
}

// stop waits for the checkpoint under way, and gives the writer back its
// own checkpoints.
func (c *walCheckpointer) stop() {
	if c.kick == nil {
		return
	}
	close(c.kick)
	<-c.done
	c.restore()
}
