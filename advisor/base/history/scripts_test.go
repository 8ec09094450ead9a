package history

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// The text of a script slurmdbd stored is kept once per fingerprint, the
// first copy kept, and read back by it; a published snapshot, which every
// user reads, keeps none of it, in its rows or its free pages.
func TestScriptTextsAreKeptAndNeverPublished(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	secret := []byte("#!/bin/bash\nexport WANDB_API_KEY=0123456789abcdef-keep-me-out\npython train.py\n")
	if err := s.KeepScriptTexts(ctx, map[string][]byte{"f1": secret}); err != nil {
		t.Fatal(err)
	}
	if err := s.KeepScriptTexts(ctx, map[string][]byte{"f1": []byte("another copy")}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ScriptText(ctx, "f1"); err != nil || !bytes.Equal(got, secret) {
		t.Errorf("f1: %q, %v", got, err)
	}
	if got, err := s.ScriptText(ctx, "f2"); err != nil || got != nil {
		t.Errorf("a fingerprint with none kept: %q, %v", got, err)
	}
	snapshot := filepath.Join(t.TempDir(), "site.db")
	if err := s.Snapshot(ctx, snapshot); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(snapshot)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("keep-me-out")) {
		t.Error("the snapshot's file holds the script's text")
	}
	pub, _, err := OpenToRead(ctx, snapshot)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if got, err := pub.ScriptText(ctx, "f1"); err != nil || got != nil {
		t.Errorf("the snapshot reads %q, %v", got, err)
	}
}
