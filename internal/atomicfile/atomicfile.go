// Package atomicfile writes a file whole or not at all: through a temporary
// file in the same directory, fsync and a rename, so a reader (on this host
// or another of a shared file system) or a crash never sees half of it, and
// an earlier version stays until the new one is there: a disk that fills up
// midway leaves the earlier file as it was.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write puts data in file with mode.
func Write(file string, data []byte, mode os.FileMode) error {
	return WriteFunc(file, mode, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc puts what write writes in file with mode.
func WriteFunc(file string, mode os.FileMode, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	defer os.Remove(tmp.Name())
	if err := fill(tmp, mode, write); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", file, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return Replace(tmp.Name(), file)
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

func fill(f *os.File, mode os.FileMode, write func(io.Writer) error) error {
	w := bufio.NewWriterSize(f, 1<<20)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	return f.Sync()
}
