//go:build slurm

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// devClusterState is scripts/dev-cluster.sh's state directory: the
// daemons' recorded pids.
func devClusterState() string {
	if dir := os.Getenv("DEV_CLUSTER_STATE"); dir != "" {
		return dir
	}
	return "/var/tmp/slurm-local"
}

// stopDaemon sends sig to the dev cluster's daemon name (mariadbd,
// slurmdbd: its pid as scripts/dev-cluster.sh recorded it). SIGTERM, as a
// restart does, waits for it to be gone; SIGSTOP leaves it hanging, its
// connections open and unanswered. start brings it back (SIGCONT, or
// scripts/dev-cluster.sh up), and runs when the test ends in any case.
func stopDaemon(t *testing.T, name string, sig syscall.Signal) (start func()) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("stops a daemon of the dev cluster: needs root (make test-slurm runs as root)")
	}
	data, err := os.ReadFile(filepath.Join(devClusterState(), name+".pid"))
	if err != nil {
		t.Fatalf("the dev cluster's %s: %v", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	started := false
	start = func() {
		t.Helper()
		if started {
			return
		}
		started = true
		if sig == syscall.SIGSTOP {
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Errorf("resume %s (pid %d): %v", name, pid, err)
			}
			return
		}
		up := exec.Command(filepath.Join(packageDir, "../../scripts/dev-cluster.sh"), "up")
		if out, err := up.CombinedOutput(); err != nil {
			t.Fatalf("dev-cluster.sh up: %v\n%s", err, out)
		}
	}
	t.Cleanup(start)
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("stop %s (pid %d): %v", name, pid, err)
	}
	for deadline := time.Now().Add(time.Minute); sig != syscall.SIGSTOP && syscall.Kill(pid, 0) == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still runs a minute after %v", name, pid, sig)
		}
	}
	return start
}
