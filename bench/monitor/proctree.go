package monitor

import (
	"bytes"
	"os"
	"strconv"
)

// procTree matches PIDs against the descendants of one root process by
// walking /proc/<pid>/stat parent links, and against the processes of the
// same Slurm job (srun starts a step's tasks under slurmstepd, outside the
// batch script's tree) by the job's cgroup. Only PIDs the driver reports are
// read, so a sample costs a few reads, not a scan of /proc.
type procTree struct {
	root  int
	job   string            // SLURM_JOB_ID, "" outside a job
	proc  string            // "/proc"
	known map[uint32]answer // PIDs already placed: a process never moves into or out of a tree
}

type answer struct{ owned, visible bool }

func newProcTree(root int, job string) *procTree {
	return &procTree{root: root, job: job, proc: "/proc", known: map[uint32]answer{}}
}

// maxDepth bounds the walk; process trees are shallow.
const maxDepth = 64

func (t *procTree) Owns(pid uint32) (owned, visible bool) {
	if a, ok := t.known[pid]; ok {
		return a.owned, a.visible
	}
	a := t.walk(int(pid))
	if a.visible && !a.owned && t.job != "" {
		a.owned = t.sameJob(int(pid))
	}
	if a.visible {
		t.known[pid] = a // an invisible PID may yet appear: ask again
	}
	return a.owned, a.visible
}

func (t *procTree) walk(p int) answer {
	for depth := 0; depth < maxDepth; depth++ {
		if p == t.root {
			return answer{true, true}
		}
		parent, ok := t.parent(p)
		if !ok {
			return answer{false, depth > 0} // the PID itself not here: another namespace's
		}
		if parent <= 1 {
			return answer{false, true}
		}
		p = parent
	}
	return answer{false, true}
}

// sameJob reports whether pid is in the job's cgroup (".../job_<id>/...",
// as Slurm's task/cgroup names it under cgroup v1 and v2).
func (t *procTree) sameJob(pid int) bool {
	data, err := os.ReadFile(t.proc + "/" + strconv.Itoa(pid) + "/cgroup")
	return err == nil && bytes.Contains(data, []byte("/job_"+t.job+"/"))
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
