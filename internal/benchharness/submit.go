//go:build linux

package benchharness

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// Command is one way of submitting: a program, its arguments and its
// environment.
type Command struct {
	Name string   `json:"name"`
	Path string   `json:"path"`
	Args []string `json:"args"` // after the program's name
	Env  []string `json:"env"`  // nil: the harness's own
}

// Marks are the lines of a submission's output whose order is noted: the
// first that starts with Advice (the wrapper's) and the first that starts
// with Answer (sbatch's "Submitted batch job N"). "": not looked for.
type Marks struct {
	Advice string `json:"advice"`
	Answer string `json:"answer"`
}

// Submission is one run of a Command as a terminal meets it. Times are in
// milliseconds from its start.
type Submission struct {
	Command   string `json:"command"`
	Submitter int    `json:"submitter"`
	Round     int    `json:"round"`
	// PromptMS: until the process exits, when a shell's prompt is back.
	PromptMS float64 `json:"prompt_ms"`
	// DoneMS: until every process it started has exited and the output
	// stream is closed (the advice of a wrapper left running beside it).
	DoneMS float64 `json:"done_ms"`
	// CPUMS is the user and system time of all of them; OwnCPUMS of the
	// process itself (a shell that execs sbatch: both) and of the children
	// it waited for.
	CPUMS    float64 `json:"cpu_ms"`
	OwnCPUMS float64 `json:"own_cpu_ms"`
	// AdviceLine and AnswerLine are where the Marks' first lines came in
	// the stream (1 is the first line, 0 none); AdviceEnd is the offset of
	// the byte after the advice line, and PromptBytes how much of the
	// stream had been written when the process exited.
	AdviceLine  int `json:"advice_line"`
	AnswerLine  int `json:"answer_line"`
	AdviceEnd   int `json:"advice_end"`
	PromptBytes int `json:"prompt_bytes"`
	Status      int `json:"status"`
}

// AdviceAfterAnswer reports whether the advice reached the stream after
// sbatch's line.
func (s Submission) AdviceAfterAnswer() bool {
	return s.AdviceLine > 0 && s.AnswerLine > 0 && s.AdviceLine > s.AnswerLine
}

// AdviceAfterPrompt reports whether the advice was written after the
// process had exited: on a terminal, after the shell's next prompt.
func (s Submission) AdviceAfterPrompt() bool { return s.AdviceLine > 0 && s.AdviceEnd > s.PromptBytes }

// BecomeSubreaper makes this process the one that the processes its
// children leave behind are handed to when their parent exits, so that
// Submit can wait for them and count their CPU time: a wrapper the sbatch
// shim leaves running in the background when it execs sbatch.
func BecomeSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", e)
	}
	return nil
}

// Submit runs c once, its standard input /dev/null and its standard output
// and error one pipe (a terminal's order), and times it. It waits for every
// process c leaves behind, which are this process's children only after
// BecomeSubreaper, and must be the only child of this process meanwhile.
// The pipe is read once they have all exited (it holds a submission's
// output: pipeBytes), so that what it holds when the process exits is what
// was written before the prompt.
func (c Command) Submit(marks Marks) (Submission, error) {
	sub := Submission{Command: c.Name}
	r, w, err := os.Pipe()
	if err != nil {
		return sub, err
	}
	defer r.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		w.Close()
		return sub, err
	}
	syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), syscall.F_SETPIPE_SZ, pipeBytes) // the default 64 KiB holds it too
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	start := time.Now()
	pid, err := syscall.ForkExec(c.Path, append([]string{c.Path}, c.Args...),
		&syscall.ProcAttr{Env: env, Files: []uintptr{null.Fd(), w.Fd(), w.Fd()}})
	w.Close()
	null.Close()
	if err != nil {
		return sub, fmt.Errorf("run %s: %w", c.Path, err)
	}
	var ws syscall.WaitStatus
	own, err := wait(pid, &ws)
	sub.PromptMS = sinceMS(start)
	sub.PromptBytes = pending(r)
	if err != nil {
		return sub, fmt.Errorf("wait for %s: %w", c.Path, err)
	}
	sub.Status = ws.ExitStatus()
	sub.OwnCPUMS = own
	sub.CPUMS = own
	for { // what it left running, handed to this subreaper
		var orphan syscall.WaitStatus
		cpu, err := wait(-1, &orphan)
		if errors.Is(err, syscall.ECHILD) {
			break
		}
		if err != nil {
			return sub, fmt.Errorf("wait for what %s left: %w", c.Path, err)
		}
		sub.CPUMS += cpu
	}
	sub.DoneMS = sinceMS(start)
	out, err := io.ReadAll(r) // every writer has exited
	sub.AdviceLine, sub.AdviceEnd = findLine(out, marks.Advice)
	sub.AnswerLine, _ = findLine(out, marks.Answer)
	return sub, err
}

// pipeBytes is the pipe's size Submit asks for: sbatch's and the advice's
// lines are a few hundred bytes, sbatch --help a few thousand.
const pipeBytes = 1 << 20

// pending is how many bytes wait in the pipe r.
func pending(r *os.File) int {
	var n int32
	syscall.Syscall(syscall.SYS_IOCTL, r.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))) // FIONREAD
	return int(n)
}

// findLine is the number (from 1) of the first line of out that starts
// with prefix, and the offset after it; 0, 0 where none does or prefix is "".
func findLine(out []byte, prefix string) (line, end int) {
	if prefix == "" {
		return 0, 0
	}
	for n, start := 1, 0; start < len(out); n++ {
		next := len(out)
		if i := bytes.IndexByte(out[start:], '\n'); i >= 0 {
			next = start + i + 1
		}
		if bytes.HasPrefix(out[start:next], []byte(prefix)) {
			return n, next
		}
		start = next
	}
	return 0, 0
}

// wait waits for pid (-1: any child) and returns its CPU time in ms.
func wait(pid int, ws *syscall.WaitStatus) (float64, error) {
	var ru syscall.Rusage
	for {
		_, err := syscall.Wait4(pid, ws, 0, &ru)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		return float64(cpu.Microseconds()) / 1000, err
	}
}

func sinceMS(start time.Time) float64 { return float64(time.Since(start).Microseconds()) / 1000 }
