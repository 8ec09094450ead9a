package main

// The fault matrix of collect, publish and the sbatch wrapper (issue 42
// §2; the table is docs/admin/scale.md's Faults): each fault, what the user
// sees, what is kept, how it recovers.

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/internal/faultfs"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// TestCollectOnAFullDisk: the disk of the history fills up in the middle
// of an import. collect fails with one sentence that says the disk is
// full and names the history (it named the dump being imported, and added
// a second line for the index of job names); the history opens, passes
// integrity_check and keeps the batches committed before; once there is
// room, the next collect completes it, every job once.
func TestCollectOnAFullDisk(t *testing.T) {
	isolate(t)
	bin := migadvisorBinary(t)
	fs := faultfs.Small(t, 64<<20)
	db := filepath.Join(fs, "history.db")
	dump := filepath.Join(t.TempDir(), "dump.psv")
	const jobs = 60_000
	writeDump(t, dump, sacctgen.FirstJobID, jobs)
	collectCmd := func() *exec.Cmd {
		return exec.Command(bin, "--db", db, "collect", "--sacct-file", dump, "--cluster", "wulver", "--json")
	}
	free := faultfs.Fill(t, fs, 4<<20) // a few batches' room
	_, errOut, code := runProcess(t, collectCmd())
	if want := "migadvisor: the history " + db + " could not be written, its file system is full ("; code != exitFailure ||
		strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, want) || !strings.Contains(errOut, "what was committed before is kept") {
		t.Errorf("on a full disk: exit %d, stderr %q", code, errOut)
	}
	kept := committedJobs(t, db)
	if kept == 0 || kept == jobs {
		t.Fatalf("%d jobs kept: the disk did not fill up in the middle of the import", kept)
	}
	free()
	if out, errOut, code := runProcess(t, collectCmd()); code != 0 {
		t.Fatalf("with room again: exit %d\n%s%s", code, out, errOut)
	}
	assertJobs(t, db, jobs)
}
