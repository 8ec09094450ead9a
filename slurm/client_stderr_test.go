package slurm

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// sacct's stderr is kept to its last 64 kB however much it writes (a
// whole cluster's warnings), and its failure still says why, in one line.
func TestSacctStderrIsBounded(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\nyes 'sacct: error: a warning for every job' | head -n 300000 >&2\necho 'sacct: error: slurmdbd is down' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "sacct"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &Client{Bin: bin}
	err := c.Sacct(context.Background(), SacctQuery{AllUsers: true}, func(r io.Reader) error {
		_, err := io.Copy(io.Discard, r)
		return err
	})
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Status != 1 || len(ce.Stderr) != 64<<10 || err.Error() != "sacct failed: sacct: error: slurmdbd is down" {
		t.Fatalf("error %q (%T), stderr of %d bytes", err, err, len(ce.Stderr))
	}
}

func TestQueuedJobGPUType(t *testing.T) {
	for gres, want := range map[string]string{"gres:gpu:a100_20g:1": "a100_20g", "gres/gpu:a100=2": "a100", "gres:gpu:1": "",
		"N/A": "", "gres:lscratch:50,gres:gpu:a100_10g:1": "a100_10g", "": ""} {
		if got := (QueuedJob{GRES: gres}).GPUType(); got != want {
			t.Errorf("%q: %q, want %q", gres, got, want)
		}
	}
}
