package history

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/migadvisor/migadvisor/internal/atomicfile"
)

// A history shared by many hosts is published, not shared live: SQLite's
// WAL needs its readers and writer on one host (its index is shared
// memory), so over NFS, GPFS or Lustre a reader on another host could see
// a torn state or break the locking. The writer keeps its live history on a
// local disk and publishes a snapshot of it: a consistent copy in
// rollback-journal mode, put in place by a rename, that readers open
// immutable (no lock, no journal, no shared memory). The next snapshot
// replaces it whole; a reader that opened the old one goes on reading it.

// ErrSnapshot is a read-write open of a published snapshot: it is read,
// never written (the next publish would replace what was written).
var ErrSnapshot = errors.New("a published snapshot (migadvisor publish), read-only: write to the live history it was published from")

// Snapshot writes a consistent copy of the history to path, world-readable
// (mode 0644), replacing what is there only once the copy is complete.
func (s *Store) Snapshot(ctx context.Context, path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	if err := os.Remove(tmp.Name()); err != nil { // VACUUM INTO makes the file itself
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	if _, err := s.db.ExecContext(ctx, `VACUUM INTO ?`, tmp.Name()); err != nil {
		os.Remove(tmp.Name() + "-journal")
		if se, full := sqliteError(err, codeFull); full {
			// The copy's file system, not the history's: %v, so that
			// Explain does not take it for the history's.
			return fmt.Errorf("snapshot %s: its file system is full (%v): what was published there is as it was; free room and publish again", path, se)
		}
		return fmt.Errorf("snapshot %s: %w", path, s.Explain(err))
	}
	if err := rollbackMode(ctx, tmp.Name()); err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	f, err := os.OpenFile(tmp.Name(), os.O_RDWR, 0)
	if err == nil {
		err = f.Chmod(0o644)
		if serr := f.Sync(); err == nil {
			err = serr
		}
		f.Close()
	}
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	return atomicfile.Replace(tmp.Name(), path)
}

// snapshotID is the application id in a snapshot's header ("MIGS"): what
// marks the file as a published snapshot, which readers open immutable
// and no one opens to write.
const snapshotID = 0x4d494753

// rollbackMode puts the copy in rollback-journal mode and marks it as a
// snapshot, both in the file's header.
func rollbackMode(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite3", fileURI(path))
	if err != nil {
		return err
	}
	defer db.Close()
	var mode string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode = DELETE`).Scan(&mode); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d`, snapshotID))
	return err
}

// isSnapshot reports whether the file at path is a published snapshot:
// marked so in its header, in rollback-journal mode, with no journal beside
// it.
func isSnapshot(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [72]byte
	if _, err := f.ReadAt(h[:], 0); err != nil || !bytes.HasPrefix(h[:], []byte("SQLite format 3\x00")) {
		return false
	}
	// The file format's read and write versions (1: rollback, 2: WAL) and
	// the application id, big-endian.
	if h[18] != 1 || h[19] != 1 || binary.BigEndian.Uint32(h[68:]) != snapshotID {
		return false
	}
	for _, sidecar := range []string{"-journal", "-wal"} {
		if _, err := os.Stat(path + sidecar); err == nil {
			return false
		}
	}
	return true
}

// IsSnapshot reports whether the file at path is a snapshot publish wrote
// (not a live history): readers on other hosts may open it.
func IsSnapshot(path string) bool { return isSnapshot(path) }
