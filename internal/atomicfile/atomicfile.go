// Package atomicfile writes a file whole or not at all: through a temporary
// file in the same directory and a rename, so a reader (on this host or
// another of a shared file system) never sees half of it, and an earlier
// version stays until the new one is there: a disk that fills up midway
// leaves the earlier file as it was. WriteFunc also syncs the file and
// the rename, so that what it published outlives a crash of the host.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write puts data in file with mode, not synced: a small file written on
// a path that must stay fast (the sbatch wrapper's record), which a crash
// of the host may lose but never leaves half written. It is written in one
// call, with no buffer between.
func Write(file string, data []byte, mode os.FileMode) error {
	return write(file, mode, false, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc puts what write writes in file with mode, synced, through a
// buffer: its writer may write a little at a time.
func WriteFunc(file string, mode os.FileMode, fn func(io.Writer) error) error {
	return write(file, mode, true, func(w io.Writer) error {
		b := bufio.NewWriterSize(w, 1<<20)
		if err := fn(b); err != nil {
			return err
		}
		return b.Flush()
	})
}

func write(file string, mode os.FileMode, sync bool, body func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	renamed := false
	defer func() { // on every way out but the rename, a panicking body's too
		if !renamed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := fill(tmp, mode, sync, body); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	if sync {
		err = Replace(tmp.Name(), file)
	} else if err = os.Rename(tmp.Name(), file); err != nil {
		err = fmt.Errorf("write %s: %w", file, err)
	}
	renamed = err == nil
	return err
}

// Replace renames the finished file from onto file, and syncs the
// directory so the rename outlives a crash.
func Replace(from, file string) error {
	if err := os.Rename(from, file); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	if dir, err := os.Open(filepath.Dir(file)); err == nil {
		_ = dir.Sync() // not every file system syncs a directory; the rename stands
		dir.Close()
	}
	return nil
}

func fill(f *os.File, mode os.FileMode, sync bool, body func(io.Writer) error) error {
	if err := body(f); err != nil {
		return err
	}
	// A umask wider than 077 would leave the file narrower than asked: only
	// then, or for another mode, is it changed.
	if info, err := f.Stat(); err != nil || info.Mode().Perm() != mode {
		if err := f.Chmod(mode); err != nil {
			return err
		}
	}
	if !sync {
		return nil
	}
	return f.Sync()
}
