package slurm

import (
	"os"
	"path/filepath"
)

// MonitorWrapFor is how variants reach the monitor: bin, else this program,
// by its absolute path with its links resolved (a shared file system makes
// it the compute nodes' path too).
func MonitorWrapFor(bin string) *MonitorWrap {
	if bin == "" {
		if self, err := os.Executable(); err == nil {
			if real, err := filepath.EvalSymlinks(self); err == nil {
				self = real
			}
			bin = self
		}
	}
	if bin != "" {
		if abs, err := filepath.Abs(bin); err == nil {
			bin = abs
		}
	}
	return &MonitorWrap{Binary: bin}
}
