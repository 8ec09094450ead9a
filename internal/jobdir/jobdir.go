// Package jobdir makes the directories migadvisor writes job scripts into.
// A job script is code that runs as its user: a directory another user can
// write to would let them change it between its writing and its running.
package jobdir

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Make creates dir (0755 less the umask, so never writable by others) and
// its parents, after checking that neither it nor any directory above it
// lets every user replace what is in it: writable by all without the
// sticky bit (which /tmp has, and which keeps others from renaming or
// deleting files they do not own).
func Make(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for d := abs; ; d = filepath.Dir(d) {
		info, err := os.Stat(d)
		if err == nil && openToAll(info.Mode()) {
			return fmt.Errorf("%s is writable by every user: another user could change the job scripts in %s before they run; choose a directory of your own", d, dir)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}

func openToAll(m fs.FileMode) bool {
	return m.IsDir() && m.Perm()&0o002 != 0 && m&fs.ModeSticky == 0
}
