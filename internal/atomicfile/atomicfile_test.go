package atomicfile

import (
	"io"
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

// A writer that panics leaves no temporary file behind, and no file.
func TestWriteFuncPanicLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	func() {
		defer func() { recover() }()
		WriteFunc(filepath.Join(dir, "f"), 0o644, func(w io.Writer) error {
			io.WriteString(w, "half")
			panic("the writer's bug")
		})
	}()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}
