//go:build slurm

package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Slurm's own sbatch with the installed cli_filter, given a script it can
// read once only (sbatch <(generate), a FIFO whose writer is gone once
// sbatch has read it) and a user whose filter cache is a FIFO: sbatch
// submits the job and returns at once, as it does without the filter. The
// filter, which runs after sbatch read the script, reads neither (they
// cannot be sought) and asks migadvisor-sbatch, under its hard time limit.
func TestSlurmCliFilterNeverWaitsOnAScriptWhoseReadBlocks(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	db := filepath.Join(work, "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	os.Unsetenv("SLURM_JOB_ID")
	t.Chdir(work)
	filter := installCliFilter(t, "")
	script := filepath.Join(work, "job.sh")
	if err := syscall.Mkfifo(script, 0o600); err != nil {
		t.Fatal(err)
	}
	cache := db + ".clifilter"
	if err := syscall.Mkfifo(cache, 0o600); err != nil {
		t.Fatal(err)
	}
	regular := writeScript(t, work, "regular.sh", "#!/bin/bash\n#SBATCH --mem=64M\n#SBATCH --time=1\ntrue\n")
	var ids []string
	t.Cleanup(func() { exec.Command("scancel", ids...).Run() })

	const bound = 20 * time.Second // sbatch's own submission takes well under a second here
	submit := func(path string, feed bool) {
		t.Helper()
		if feed { // the script's one writer, gone once sbatch has read it
			go func() {
				if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
					f.WriteString("#!/bin/bash\n#SBATCH --mem=64M\n#SBATCH --time=1\ntrue\n")
					f.Close()
				}
			}()
		}
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sbatch", "--parsable", path)
		cmd.Env = append(os.Environ(), "SLURM_CONF="+filter.conf)
		start := time.Now()
		out, err := cmd.Output()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("sbatch %s: held past %s by the filter", path, bound)
		}
		if err != nil {
			t.Fatalf("sbatch %s: %v\n%s", path, err, out)
		}
		ids = append(ids, strings.TrimSpace(string(out)))
		if held := time.Since(start); held > 5*time.Second {
			t.Errorf("sbatch %s took %s", path, held)
		}
	}
	submit(script, true)   // no key: the script cannot be sought
	submit(regular, false) // a key, over a cache that is a FIFO
}
