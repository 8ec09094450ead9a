//go:build !slurm && !mariadb && !gpu

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// withoutSlurm puts commands named like Slurm's first on PATH, each failing
// at once as a client does when no controller answers. The unit tier must not
// reach whatever Slurm the machine has: an installed client with no daemon
// waits about 18 s per call before failing (scontrol and sacct retry their
// controller), which turned track's look-ups into minutes of CI time, and a
// running dev cluster would answer with jobs the test never made.
func withoutSlurm(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"sacct", "sbatch", "scontrol", "squeue", "sinfo", "srun", "salloc", "scancel", "sacctmgr"} {
		stub := "#!/bin/sh\necho \"" + name + ": error: Unable to contact slurm controller (connect failure)\" >&2\nexit 1\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// After the stubs a test has put on PATH (all in temporary
	// directories), before the first directory of the machine's own.
	entries := filepath.SplitList(os.Getenv("PATH"))
	at := 0
	for at < len(entries) && strings.HasPrefix(entries[at], os.TempDir()+string(filepath.Separator)) {
		at++
	}
	entries = slices.Insert(entries, at, dir)
	t.Setenv("PATH", strings.Join(entries, string(os.PathListSeparator)))
	// Nor the machine's slurm.conf (the dev cluster's, where make test has
	// run it), which names the cluster before scontrol is asked: a test
	// that sets SLURM_CONF itself keeps its own.
	if os.Getenv("SLURM_CONF") == "" {
		t.Setenv("SLURM_CONF", filepath.Join(dir, "no-slurm.conf"))
	}
}
