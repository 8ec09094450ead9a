package monitor

import (
	"fmt"
	"os"
	"os/exec"
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
	tree := newProcTree(cmd.Process.Pid)
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
