// Package slurmtest is a fake of Slurm's commands for unit tests: a
// slurm.Runner that answers each command from what the test gave it and
// keeps every call, so that no test writes a stand-in script. Tests of
// real Slurm run on the dev cluster (the slurm build tag).
package slurmtest

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"

	"github.com/migadvisor/migadvisor/slurm"
)

// Reply is what a command prints and how it exits.
type Reply struct {
	Stdout, Stderr string
	Status         int // 0 for success
	// More, when set, is read after Stdout: a command's output as it
	// streams, which may stall (a test that kills a command mid-stream).
	// The caller's context ends it, as it kills a real command: a read
	// returns at once, and the command's status is a signal's (-1).
	More io.Reader
}

// Handler answers one call of a command.
type Handler func(call slurm.Call) Reply

// Fake answers Slurm's commands; a command it has no handler for is not
// found, as on a host without Slurm. Safe for concurrent calls.
type Fake struct {
	mu       sync.Mutex
	handlers map[string]Handler
	calls    []slurm.Call
}

// New is a fake with no command.
func New() *Fake { return &Fake{handlers: map[string]Handler{}} }

// On answers the command name with h.
func (f *Fake) On(name string, h Handler) *Fake {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers[name] = h
	return f
}

// Prints answers every call of name with stdout and success.
func (f *Fake) Prints(name, stdout string) *Fake {
	return f.On(name, func(slurm.Call) Reply { return Reply{Stdout: stdout} })
}

// Fails answers every call of name with stderr and the exit status.
func (f *Fake) Fails(name, stderr string, status int) *Fake {
	return f.On(name, func(slurm.Call) Reply { return Reply{Stderr: stderr, Status: status} })
}

// Cluster answers `scontrol show config` with the cluster's name.
func (f *Fake) Cluster(name string) *Fake {
	return f.Prints("scontrol", "ClusterName             = "+name+"\n")
}

// Calls are the calls of the command name so far, in order.
func (f *Fake) Calls(name string) []slurm.Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []slurm.Call
	for _, c := range f.calls {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// Start runs the handler of call's command.
func (f *Fake) Start(ctx context.Context, call slurm.Call, stderr io.Writer) (io.Reader, func() error, error) {
	f.mu.Lock()
	call.Args = append([]string(nil), call.Args...)
	f.calls = append(f.calls, call)
	h := f.handlers[call.Name]
	f.mu.Unlock()
	if h == nil {
		return nil, nil, &exec.Error{Name: call.Name, Err: exec.ErrNotFound}
	}
	r := h(call)
	if _, err := io.WriteString(stderr, r.Stderr); err != nil {
		return nil, nil, err
	}
	wait := func() error { return nil }
	if r.Status != 0 {
		wait = func() error { return ExitError(r.Status) }
	}
	var out io.Reader = strings.NewReader(r.Stdout)
	if r.More != nil {
		// Through a pipe, which the context closes whatever More does.
		pr, pw := io.Pipe()
		all := io.MultiReader(out, r.More)
		go func() {
			_, err := io.Copy(pw, all)
			pw.CloseWithError(err)
		}()
		stop := context.AfterFunc(ctx, func() { pr.CloseWithError(ctx.Err()) })
		out, wait = pr, func() error {
			stop()
			if ctx.Err() != nil {
				return ExitError(-1) // killed
			}
			if r.Status != 0 {
				return ExitError(r.Status)
			}
			return nil
		}
	}
	return out, wait, nil
}

// ExitError is a command's non-zero exit status.
type ExitError int

func (e ExitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// ExitCode is the status, as exec.ExitError gives it.
func (e ExitError) ExitCode() int { return int(e) }
