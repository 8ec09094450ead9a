// Package faultfs makes the file-system faults of the fault matrix
// (docs/admin/scale.md, Faults) for tests: a directory on a small file
// system of its own, which a test fills up (ENOSPC, as a full disk) or
// makes read-only (EROFS, whoever writes: root too). Each is a tmpfs
// mounted for the test and unmounted after it, so it needs root (make test
// runs as root); elsewhere the test is skipped, saying why.
package faultfs

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Small is a new directory on a file system of its own, size bytes of
// room, writable; unmounted when the test ends.
func Small(t testing.TB, size int64) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("a file system that fills up or turns read-only is a tmpfs mounted for the test: needs root (make test runs as root)")
	}
	dir := filepath.Join(t.TempDir(), "fs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): the file-system faults need it", err)
	}
	// Registered after TempDir's: it runs first, and TempDir removes an
	// empty directory.
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillName is the file Fill takes the room with.
const fillName = ".faultfs-fill"

// Fill takes the room on dir's file system (Small's) but leave bytes, so
// that a write past them fails with ENOSPC; free gives it back.
func Fill(t testing.TB, dir string, leave int64) (free func()) {
	t.Helper()
	file := filepath.Join(dir, fillName)
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if take := Room(t, dir) - leave; take > 0 {
		if err := syscall.Fallocate(int(f.Fd()), 0, 0, take); err != nil {
			t.Fatalf("fill %s: %v", dir, err)
		}
	}
	return func() {
		t.Helper()
		if err := os.Remove(file); err != nil {
			t.Fatalf("free %s: %v", dir, err)
		}
	}
}

// Room is how many bytes are free on dir's file system.
func Room(t testing.TB, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// ReadOnly remounts dir's file system (Small's) read-only, so that every
// write under it fails with EROFS, root's too; writable turns it back.
func ReadOnly(t testing.TB, dir string) (writable func()) {
	t.Helper()
	remount(t, dir, syscall.MS_RDONLY)
	return func() {
		t.Helper()
		remount(t, dir, 0)
	}
}

func remount(t testing.TB, dir string, flags uintptr) {
	t.Helper()
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_NOSUID|syscall.MS_NODEV|flags, ""); err != nil {
		t.Fatalf("remount %s: %v", dir, err)
	}
}
