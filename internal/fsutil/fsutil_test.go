package fsutil

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSameFileThroughLinksAndMissingPaths(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	if err := os.WriteFile(a, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "b")
	os.WriteFile(other, nil, 0o644)
	missing := filepath.Join(dir, "sub", "..", "missing")
	cases := []struct {
		a, b           string
		same, samePath bool
	}{
		{a, link, true, true},
		{a, other, false, false},
		{missing, filepath.Join(dir, "missing"), false, true},
		{missing, a, false, false},
	}
	for _, c := range cases {
		if got := SameFile(c.a, c.b); got != c.same {
			t.Errorf("SameFile(%s, %s) = %v", c.a, c.b, got)
		}
		if got := SamePath(c.a, c.b); got != c.samePath {
			t.Errorf("SamePath(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
