package index

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/internal/atomicfile"
	"github.com/migadvisor/migadvisor/internal/fsutil"
)

// The files Publish writes in its directory.
const (
	SnapshotName = "history.db" // the history's snapshot, for recommend
	IndexName    = "advice.idx" // the advice index, for the sbatch wrapper
)

// WriteFile writes entries as the index at path, world-readable, in place
// of what is there only once it is complete.
func WriteFile(path string, entries map[Key][]byte) error { return writeFile(path, entries, 0o644) }

func writeFile(path string, entries map[Key][]byte, mode os.FileMode) error {
	return atomicfile.WriteFunc(path, mode, func(w io.Writer) error { return Write(w, entries) })
}

// Published says what a publish wrote.
type Published struct {
	Snapshot, Index string
	Stats
}

// Publish writes the history's snapshot and its advice index (a site's:
// no names, no paths) in dir, each whole or not at all: readers keep the
// previous files until the new ones are in place.
func Publish(ctx context.Context, st *history.Store, dir string) (Published, error) {
	p := Published{Snapshot: filepath.Join(dir, SnapshotName), Index: filepath.Join(dir, IndexName)}
	if fsutil.SameFile(st.Path(), p.Snapshot) {
		return p, fmt.Errorf("publish: %s is the history being published: publish into another directory (the live history stays on the collecting host's own disk)", p.Snapshot)
	}
	if err := st.Snapshot(ctx, p.Snapshot); err != nil {
		return p, err
	}
	entries, stats, err := Build(ctx, st, Options{})
	if err != nil {
		return p, err
	}
	p.Stats = stats
	if err := WriteFile(p.Index, entries); err != nil {
		return p, fmt.Errorf("publish the index: %w", err)
	}
	return p, nil
}
