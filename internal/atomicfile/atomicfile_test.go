package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.json")
	if err := os.WriteFile(file, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(file, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	info, _ := os.Stat(file)
	entries, _ := os.ReadDir(dir)
	if string(data) != "new" || info.Mode().Perm() != 0o644 || len(entries) != 1 {
		t.Errorf("content %q mode %v, %d files left", data, info.Mode().Perm(), len(entries))
	}
	// A directory that cannot be written keeps the old file and says which.
	if err := Write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}
