package slurm

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
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

// A sacct that fails on its own (slurmdbd down: nothing on stdout, exit 1)
// is its reason, not what the reader made of the output it never had.
func TestSacctFailureBeatsTheReadersError(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\necho 'sacct: error: Problem talking to the database: Connection refused' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "sacct"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	err := (&Client{Bin: bin}).Sacct(context.Background(), SacctQuery{AllUsers: true}, func(r io.Reader) error {
		_, err := NewSacctReader(r)
		return err
	})
	if err == nil || err.Error() != "sacct failed: sacct: error: Problem talking to the database: Connection refused" {
		t.Fatalf("error %q", err)
	}
}

// A sacct that prints nothing more for SacctIdle is stopped, with an
// *IdleError that says so, even where a child of its holds its stdout
// open; a reader slow between reads is not idle.
func TestSacctStopsWhenIdle(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\necho JobIDRaw\necho 1\nsleep 5\necho 2\n" // sleep, a child, holds stdout
	if err := os.WriteFile(filepath.Join(bin, "sacct"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	err := (&Client{Bin: bin, SacctIdle: 300 * time.Millisecond}).Sacct(context.Background(), SacctQuery{AllUsers: true}, func(r io.Reader) error {
		_, err := io.Copy(io.Discard, r)
		return err
	})
	var idle *IdleError
	if took := time.Since(began); !errors.As(err, &idle) || took > 6*time.Second ||
		err.Error() != "sacct printed nothing for 300ms, and was stopped: is slurmdbd answering? ('sacct' by hand tells)" {
		t.Fatalf("after %v: %q (%T)", took, err, err)
	}
	script = "#!/bin/sh\necho JobIDRaw\necho 1\necho 2\n"
	if err := os.WriteFile(filepath.Join(bin, "sacct"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	err = (&Client{Bin: bin, SacctIdle: 100 * time.Millisecond}).Sacct(context.Background(), SacctQuery{AllUsers: true}, func(r io.Reader) error {
		time.Sleep(300 * time.Millisecond) // the history's write lock
		_, err := io.Copy(io.Discard, r)
		return err
	})
	if err != nil {
		t.Errorf("a slow reader: %v", err)
	}
}
