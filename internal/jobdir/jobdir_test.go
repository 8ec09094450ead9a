package jobdir

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestMakeRefusesDirectoriesOpenToAll(t *testing.T) {
	root := t.TempDir()
	old := syscall.Umask(0) // even with no umask, what Make creates is not writable by others
	defer syscall.Umask(old)
	mine := filepath.Join(root, "mine", "sweep")
	if err := Make(mine); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{mine, filepath.Dir(mine)} {
		if info, _ := os.Stat(d); info.Mode().Perm() != 0o755 {
			t.Errorf("%s: mode %v", d, info.Mode().Perm())
		}
	}
	open := filepath.Join(root, "open")
	os.Mkdir(open, 0o777)
	for _, dir := range []string{open, filepath.Join(open, "a", "b")} {
		err := Make(dir)
		if err == nil || !strings.Contains(err.Error(), open+" is writable by every user") {
			t.Errorf("Make(%s): %v", dir, err)
		}
	}
	if _, err := os.Stat(filepath.Join(open, "a")); err == nil {
		t.Error("Make created a directory under one open to all")
	}
	sticky := filepath.Join(root, "sticky")
	os.Mkdir(sticky, 0o777)
	os.Chmod(sticky, 0o777|os.ModeSticky)
	if err := Make(filepath.Join(sticky, "sweep")); err != nil {
		t.Errorf("under a sticky directory like /tmp: %v", err)
	}
}
