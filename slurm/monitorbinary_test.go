package slurm

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMonitorWrapFor(t *testing.T) {
	wd, _ := os.Getwd()
	self, _ := os.Executable()
	self, _ = filepath.EvalSymlinks(self)
	for bin, want := range map[string]string{
		"/opt/bin/migadvisor-monitor": "/opt/bin/migadvisor-monitor",
		"bin/migadvisor":              filepath.Join(wd, "bin/migadvisor"),
		"":                            self,
	} {
		if got := MonitorWrapFor(bin).Binary; got != want {
			t.Errorf("MonitorWrapFor(%q) = %q, want %q", bin, got, want)
		}
	}
}
