package monitor

import (
	"bytes"
	"os"
	"strconv"
)

// procTree matches PIDs against the descendants of one root process by
// walking /proc/<pid>/stat parent links. Only PIDs the driver reports are
// walked, so a sample costs a few reads, not a scan of /proc.
type procTree struct {
	root  int
	proc  string          // "/proc"
	known map[uint32]bool // PIDs already found to be the root's descendants
}

func newProcTree(root int) *procTree {
	return &procTree{root: root, proc: "/proc", known: map[uint32]bool{}}
}

// maxDepth bounds the walk; process trees are shallow.
const maxDepth = 64

func (t *procTree) Owns(pid uint32) (owned, visible bool) {
	if t.known[pid] {
		return true, true
	}
	p := int(pid)
	for depth := 0; depth < maxDepth; depth++ {
		if p == t.root {
			t.known[pid] = true
			return true, true
		}
		parent, ok := t.parent(p)
		if !ok {
			return false, depth > 0 // the PID itself not here: another namespace's
		}
		if parent <= 1 {
			return false, true
		}
		p = parent
	}
	return false, true
}

// parent reads the PPID field of /proc/<pid>/stat. The command name in
// parentheses may hold spaces and parentheses, so fields are counted from
// the last ')'.
func (t *procTree) parent(pid int) (int, bool) {
	data, err := os.ReadFile(t.proc + "/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(fields[1]))
	return ppid, err == nil
}
