package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
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
// previous files until the new ones are in place. Publishes into one
// directory take turns (a lock file in it, LockName), so that its snapshot
// and index are of one history; and each removes what publishes killed
// before it left there (their unfinished copies, as large as the history).
func Publish(ctx context.Context, st *history.Store, dir string) (Published, error) {
	p := Published{Snapshot: filepath.Join(dir, SnapshotName), Index: filepath.Join(dir, IndexName)}
	if fsutil.SameFile(st.Path(), p.Snapshot) {
		return p, fmt.Errorf("publish: %s is the history being published: publish into another directory (the live history stays on the collecting host's own disk)", p.Snapshot)
	}
	unlock, err := lockDir(ctx, dir)
	if err != nil {
		return p, err
	}
	defer unlock()
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

// LockName is the lock file of a directory published in: the publish that
// holds it (flock) is the only one at work there.
const LockName = ".publish.lock"

// lockWait is how long a publish waits for another to finish.
const lockWait = 10 * time.Minute

// lockDir takes dir's publish lock, waiting up to lockWait for another
// publish to end, and removes what killed publishes left: every
// unfinished copy of the snapshot or the index, none of which a live
// publish holds while it has the lock. On a file system without flock
// (Lustre mounted without it), a publish goes on unlocked and removes
// only copies a day old, which no publish still writes.
func lockDir(ctx context.Context, dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, LockName), os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrPermission) {
		// The lock is the first file a publish writes there: say what the
		// admin can fix, the directory's permissions, not the lock's name.
		return nil, fmt.Errorf("publish: %s is not writable by this user (%w)", dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			break
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("publish: another publish into %s has held its lock (%s) for %v: is it stuck?", dir, LockName, lockWait)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	older := time.Duration(0)
	if err != nil { // no flock here: no telling a live publish's copies
		older = 24 * time.Hour
	}
	removeUnfinished(dir, older)
	return func() { f.Close() }, nil // closing releases it
}

// removeUnfinished removes the unfinished copies of the snapshot and the
// index (atomicfile's temporary files, and SQLite's journal of one) in
// dir, last changed at least older ago.
func removeUnfinished(dir string, older time.Duration) {
	for _, name := range []string{SnapshotName, IndexName} {
		left, _ := filepath.Glob(filepath.Join(dir, "."+name+".tmp*"))
		for _, f := range left {
			if info, err := os.Lstat(f); err == nil && info.Mode().IsRegular() && time.Since(info.ModTime()) >= older {
				os.Remove(f)
			}
		}
	}
}
