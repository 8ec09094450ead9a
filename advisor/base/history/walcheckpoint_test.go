package history

import (
	"context"
	"os"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// An import checkpoints as it goes, beside its writer: its WAL stays
// under 20 MiB (100k jobs make 26 MB), and the connections go back to
// SQLite's own checkpoints after.
func TestImportCheckpointsBesideItsWriter(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	r, err := slurm.NewSacctReader(sacctgen.New(100_000, slurm.SacctDelimiter))
	if err != nil {
		t.Fatal(err)
	}
	opt := testOptions()
	opt.BatchSize = 0 // the default's
	if _, err := s.ImportJobs(ctx, r.Next, opt); err != nil {
		t.Fatal(err)
	}
	wal, err := os.Stat(s.Path() + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if limit := int64(20 << 20); wal.Size() > limit {
		t.Errorf("the WAL grew to %d bytes, over %d", wal.Size(), limit)
	}
	// Every connection the pool holds, at once.
	for range 3 {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var pages int
		if err := conn.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&pages); err != nil || pages != 1000 {
			t.Errorf("a connection checkpoints every %d pages (%v) after the import, not SQLite's 1000", pages, err)
		}
	}
}
