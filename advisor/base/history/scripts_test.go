package history

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// The text of a script slurmdbd stored is kept once per fingerprint, the
// first copy kept, beside the history in a directory only its owner reads
// (whatever the umask: a site-wide history itself is made world-readable),
// and read back by it. A published snapshot, which every user reads, has
// none of it beside it or in it.
func TestScriptTextsAreKeptApartAndNeverPublished(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	secret := []byte("#!/bin/bash\nexport WANDB_API_KEY=0123456789abcdef-keep-me-out\npython train.py\n")
	const fp = "f1e2d3c4b5a69788"
	if err := s.KeepScriptTexts(map[string][]byte{fp: secret, "../../etc/x": []byte("not a fingerprint")}); err != nil {
		t.Fatal(err)
	}
	if err := s.KeepScriptTexts(map[string][]byte{fp: []byte("another copy")}); err != nil {
		t.Fatal(err)
	}
	if got := s.ScriptText(fp); !bytes.Equal(got, secret) {
		t.Errorf("%s: %q", fp, got)
	}
	if got := s.ScriptText("0000000000000000"); got != nil {
		t.Errorf("a fingerprint with none kept: %q", got)
	}
	dir := scriptTextsDir(s.Path())
	entries, _ := os.ReadDir(dir)
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o700 || len(entries) != 1 {
		t.Fatalf("the scripts' directory: %v %v, %d entries", st.Mode(), err, len(entries))
	}
	if fi, err := os.Stat(filepath.Join(dir, fp)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the script's file: %v %v", fi.Mode(), err)
	}
	// A directory made by another, or restored with other modes, is
	// made its owner's alone again.
	os.Chmod(dir, 0o755)
	if err := s.KeepScriptTexts(map[string][]byte{"0123456789abcdef": secret}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("the scripts' directory left %v", st.Mode())
	}
	pubDir := t.TempDir()
	snapshot := filepath.Join(pubDir, "site.db")
	if err := s.Snapshot(ctx, snapshot); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(pubDir, func(path string, d os.DirEntry, err error) error {
		if data, _ := os.ReadFile(path); bytes.Contains(data, []byte("keep-me-out")) {
			t.Errorf("%s holds the script's text", path)
		}
		return nil
	})
	pub, _, err := OpenToRead(ctx, snapshot)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if got := pub.ScriptText(fp); got != nil {
		t.Errorf("the snapshot reads %q", got)
	}
}
