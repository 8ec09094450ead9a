package monitor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestProcTree(t *testing.T) {
	// sh starts sleep as its child: both are in the tree rooted at sh.
	cmd := exec.Command("sh", "-c", "sleep 5 & echo $!; wait")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var child int
	if _, err := fmt.Fscan(stdout, &child); err != nil {
		t.Fatal(err)
	}
	tree := newProcTree(cmd.Process.Pid, "")
	cases := []struct {
		pid            uint32
		owned, visible bool
	}{
		{uint32(cmd.Process.Pid), true, true},
		{uint32(child), true, true},
		{uint32(os.Getpid()), false, true}, // the monitor's own parent side
		{1, false, true},
		{4194304 + 7, false, false}, // above pid_max: another namespace's PID
	}
	for _, c := range cases {
		for round := 0; round < 2; round++ { // the second answer comes from the cache
			owned, visible := tree.Owns(c.pid)
			if owned != c.owned || visible != c.visible {
				t.Errorf("Owns(%d) round %d = %v, %v; want %v, %v", c.pid, round, owned, visible, c.owned, c.visible)
			}
		}
	}
}

// A task that srun started is not in the batch script's tree, but it is in
// the job's cgroup.
func TestProcTreeSameJob(t *testing.T) {
	proc := t.TempDir()
	for pid, cgroup := range map[string]string{
		"500": "0::/system.slice/slurmstepd.scope/job_42/step_0/user/task_0\n",
		"501": "4:memory:/slurm/uid_0/job_42/step_batch\n",
		"502": "0::/system.slice/slurmstepd.scope/job_420/step_0/user/task_0\n",
	} {
		os.MkdirAll(filepath.Join(proc, pid), 0o755)
		os.WriteFile(filepath.Join(proc, pid, "stat"), []byte(pid+" (python) S 77 1 1"), 0o644)
		os.WriteFile(filepath.Join(proc, pid, "cgroup"), []byte(cgroup), 0o644)
	}
	tree := newProcTree(99999, "42")
	tree.proc = proc
	for pid, want := range map[uint32]bool{500: true, 501: true, 502: false} {
		if owned, visible := tree.Owns(pid); owned != want || !visible {
			t.Errorf("pid %d: owned %v visible %v, want %v", pid, owned, visible, want)
		}
	}
}
