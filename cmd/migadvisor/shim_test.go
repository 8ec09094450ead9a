package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// TestSbatchShim runs scripts/sbatch as a login node would: first on PATH,
// Slurm's sbatch (the fake, which records its argv and environment) after it.
func TestSbatchShim(t *testing.T) {
	isolate(t)
	bin := sbatchBinary(t)
	shimDir, slurmDir, installed := t.TempDir(), t.TempDir(), t.TempDir()
	shim, _ := os.ReadFile(filepath.Join(packageDir, "../../scripts/sbatch"))
	os.WriteFile(filepath.Join(shimDir, "sbatch"), shim, 0o755)
	// As make install lays it out: PREFIX/libexec/migadvisor/{sbatch,migadvisor-sbatch}.
	os.WriteFile(filepath.Join(installed, "sbatch"), shim, 0o755)
	os.Symlink(bin, filepath.Join(installed, "migadvisor-sbatch"))
	t.Setenv("FAKESBATCH_ID", "77")
	sbatch := newFakeSbatch(t, slurmDir)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	t.Setenv("PATH", shimDir+":"+slurmDir+":"+os.Getenv("PATH"))
	args := []string{"--export=ALL,X=1 2", "-J", "it's", wrapperScript(t), "a b"}
	for _, tc := range []struct {
		name   string
		shim   string // the shim run: the first on PATH, or the installed one
		env    []string
		record bool
	}{
		{"through migadvisor", "sbatch", []string{"MIGADVISOR_BIN=" + bin}, true},
		{"through the migadvisor-sbatch beside it", filepath.Join(installed, "sbatch"), nil, true},
		{"migadvisor missing", "sbatch", []string{"MIGADVISOR_BIN=/nonexistent/migadvisor"}, false},
		{"disabled", "sbatch", []string{"MIGADVISOR_BIN=" + bin, "MIGADVISOR_DISABLE=1"}, false},
		{"disabled, another copy of the shim on PATH", "sbatch", []string{"MIGADVISOR_DISABLE=1",
			"PATH=" + shimDir + ":" + installed + ":" + slurmDir + ":" + os.Getenv("PATH")}, false},
	} {
		os.RemoveAll(os.Getenv("MIGADVISOR_DB") + ".spool")
		cmd := exec.Command(tc.shim, args...)
		cmd.Env = append(os.Environ(), tc.env...)
		out, err := cmd.CombinedOutput()
		calls := sbatch.take(t)
		if err != nil || string(out) != "Submitted batch job 77\n" || len(calls) != 1 || !slices.Equal(calls[0].Args, args) ||
			slices.ContainsFunc(calls[0].Env, func(v string) bool { return strings.HasPrefix(v, "MIGADVISOR_SHIM=") }) {
			t.Errorf("%s: %v, output %q, Slurm's sbatch got %+v", tc.name, err, out, calls)
		}
		pending, _ := os.ReadDir(os.Getenv("MIGADVISOR_DB") + ".spool")
		if recorded := len(pending) == 1; recorded != tc.record {
			t.Errorf("%s: recorded %v, want %v", tc.name, recorded, tc.record)
		}
	}
}

// "sbatch --help" on a login node is Slurm's help, through the shim as
// through a link; "migadvisor sbatch --help" is the wrapper's own page.
func TestSbatchHelpIsSlurmsThroughTheShim(t *testing.T) {
	isolate(t)
	bin := sbatchBinary(t)
	shimDir, slurmDir := t.TempDir(), t.TempDir()
	shim, _ := os.ReadFile(filepath.Join(packageDir, "../../scripts/sbatch"))
	os.WriteFile(filepath.Join(shimDir, "sbatch"), shim, 0o755)
	newFakeSbatch(t, slurmDir) // its help: "Slurm's sbatch --help"
	t.Setenv("PATH", shimDir+":"+slurmDir+":"+os.Getenv("PATH"))
	for _, flag := range []string{"--help", "-h"} {
		cmd := exec.Command("sbatch", flag)
		cmd.Env = append(os.Environ(), "MIGADVISOR_BIN="+bin)
		if out, err := cmd.CombinedOutput(); err != nil || string(out) != "Slurm's sbatch "+flag+"\n" {
			t.Errorf("sbatch %s through the shim: %v %q", flag, err, out)
		}
	}
	out, err := exec.Command(migadvisorBinary(t), "sbatch", "--help").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "migadvisor sbatch [SBATCH OPTIONS...]") {
		t.Errorf("migadvisor sbatch --help: %v %q", err, out)
	}
	out, err = exec.Command(bin, "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "see 'migadvisor sbatch --help'") {
		t.Errorf("migadvisor-sbatch --help: %v %q", err, out)
	}
}

// The shim runs Slurm's sbatch in its own place and the wrapper beside it:
// sbatch's exit status and input are the user's; a second copy of the shim
// on PATH is no sbatch of Slurm's; the record waits for collect (no job id,
// and whether sbatch took the job is not known) unless the advice is
// applied, when the wrapper runs sbatch and reads the id it prints.
func TestSbatchShimBesideSbatch(t *testing.T) {
	isolate(t)
	bin := sbatchBinary(t)
	shimDir, copyDir, slurmDir := t.TempDir(), t.TempDir(), t.TempDir()
	shim, _ := os.ReadFile(filepath.Join(packageDir, "../../scripts/sbatch"))
	os.WriteFile(filepath.Join(shimDir, "sbatch"), shim, 0o755)
	os.WriteFile(filepath.Join(copyDir, "sbatch"), shim, 0o755)
	t.Setenv("FAKESBATCH_ID", "78")
	t.Setenv("FAKESBATCH_STDIN", "1")
	sbatch := newFakeSbatch(t, slurmDir)
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	t.Setenv("PATH", shimDir+":"+copyDir+":"+slurmDir+":"+os.Getenv("PATH"))
	script := wrapperScript(t)
	for _, tc := range []struct {
		name string
		env  []string
		id   string // the record's job id: "" beside sbatch
		exit int
	}{
		{"beside", []string{"FAKESBATCH_EXIT=3"}, "", 3},
		{"applied", []string{"MIGADVISOR_APPLY=1"}, "78", 0},
	} {
		os.RemoveAll(db + ".spool")
		cmd := exec.Command("sbatch", script)
		cmd.Env = append(os.Environ(), append(tc.env, "MIGADVISOR_BIN="+bin)...)
		cmd.Stdin = strings.NewReader("on stdin\n")
		out, err := cmd.Output()
		code := 0
		if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			code = -1
		}
		if code != tc.exit || string(out) != "Submitted batch job 78\n" {
			t.Errorf("%s: %v, output %q: want Slurm's sbatch's exit status %d and its output", tc.name, err, out, tc.exit)
		}
		if calls := sbatch.take(t); len(calls) != 1 || (tc.id == "" && calls[0].Stdin != "on stdin\n") {
			t.Errorf("%s: Slurm's sbatch ran %d times, and read on stdin %+v", tc.name, len(calls), calls)
		}
		// Beside sbatch, the record comes a moment after sbatch exits.
		var files []string
		for deadline := time.Now().Add(5 * time.Second); len(files) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			files, _ = history.SpoolFor(db).Pending()
		}
		if len(files) != 1 {
			t.Fatalf("%s: %d records spooled", tc.name, len(files))
		}
		data, _ := os.ReadFile(files[0])
		var sub history.Submission
		if json.Unmarshal(data, &sub); sub.JobID != tc.id || sub.Fingerprint == "" {
			t.Errorf("%s: recorded %+v", tc.name, sub)
		}
	}
}

// What sbatch, and so the job, gets from the shim is the caller's
// environment, unchanged: a shell exports what it imported, so a name the
// shim used for itself (dir, arg, self, _) would reach the job.
func TestSbatchShimLeavesTheEnvironmentAlone(t *testing.T) {
	isolate(t)
	bin := sbatchBinary(t)
	shimDir, slurmDir := t.TempDir(), t.TempDir()
	shim, _ := os.ReadFile(filepath.Join(packageDir, "../../scripts/sbatch"))
	os.WriteFile(filepath.Join(shimDir, "sbatch"), shim, 0o755)
	sbatch := newFakeSbatch(t, slurmDir)
	caller := append(os.Environ(), "PATH="+shimDir+":"+slurmDir+":"+os.Getenv("PATH"), "MIGADVISOR_BIN="+bin,
		"MIGADVISOR_DB="+filepath.Join(t.TempDir(), "history.db"),
		"dir=/scratch/mine", "arg=mine", "self=mine", "here=mine", "sbatch=mine", "apply=mine", "second=mine", "_=/usr/bin/sbatch")
	envOf := func(name string) []string {
		cmd := exec.Command(name, wrapperScript(t))
		cmd.Env = caller
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		calls := sbatch.take(t)
		if len(calls) != 1 {
			t.Fatalf("%s: Slurm's sbatch ran %d times", name, len(calls))
		}
		slices.Sort(calls[0].Env)
		return calls[0].Env
	}
	direct := envOf(filepath.Join(slurmDir, "sbatch"))
	if shimmed := envOf(filepath.Join(shimDir, "sbatch")); !slices.Equal(shimmed, direct) {
		t.Errorf("sbatch's environment through the shim differs:\n%s\nagainst run directly:\n%s",
			strings.Join(shimmed, "\n"), strings.Join(direct, "\n"))
	}
}

// The shim reads nothing of an sbatch after its last place on PATH with
// an srun beside it, which cost a read(2) per byte of Slurm's binary up to
// its first newline. Other copies of the shim are read and passed over,
// before it or after it: Slurm's sbatch runs once, the wrapper once (twice
// where a copy sits beside an srun after it, as docs/admin/wrapper.md
// says). Copies with no Slurm's sbatch after them end in an error and no record,
// not in running each other for ever, even copies beside an srun and a
// shim met twice on PATH. The caller's descriptors reach sbatch, not the
// wrapper left running: a lock taken on one is not held longer.
func TestSbatchShimReadsNothingOfSlurmsSbatch(t *testing.T) {
	isolate(t)
	bin := sbatchBinary(t)
	first, second, slurmDir, besideSrun, besideSrun2 := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	shim, _ := os.ReadFile(filepath.Join(packageDir, "../../scripts/sbatch"))
	for _, dir := range []string{first, second, besideSrun, besideSrun2} {
		os.WriteFile(filepath.Join(dir, "sbatch"), shim, 0o755)
	}
	for _, dir := range []string{slurmDir, besideSrun, besideSrun2} {
		os.WriteFile(filepath.Join(dir, "srun"), []byte("#!/bin/sh\n"), 0o755)
	}
	t.Setenv("FAKESBATCH_ID", "79")
	sbatch := newFakeSbatch(t, slurmDir)
	// Read by the shell, the fake's first line would cost a read(2) a byte.
	fake, _ := os.ReadFile(sbatch.Path)
	firstLine := bytes.IndexByte(fake, '\n')
	if firstLine < 100 {
		t.Fatalf("the fake sbatch's first line is %d bytes: too short to tell a read of it", firstLine)
	}
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	lock, err := os.Create(filepath.Join(t.TempDir(), "lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	// The wrapper holds the caller's stderr until it exits, so a caller
	// that reads it (CombinedOutput) has every record when it returns. PATH
	// is path alone: this machine's own sbatch may follow the system's.
	submit := func(shim string, path []string, lock *os.File, env ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		os.RemoveAll(db + ".spool")
		cmd := exec.CommandContext(ctx, filepath.Join(shim, "sbatch"), wrapperScript(t))
		cmd.Env = append(append(os.Environ(), "MIGADVISOR_BIN="+bin, "PATH="+strings.Join(path, ":")), env...)
		if lock != nil {
			cmd.ExtraFiles = []*os.File{lock, lock, lock, lock, lock, lock, lock} // descriptors 3 to 9
		}
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("PATH %v: the shim ran on for 20 s: %s", path, out)
		}
		return string(out), err
	}
	for _, tc := range []struct {
		name     string
		shim     string // the one run
		path     []string
		unread   bool // Slurm's sbatch is taken unread
		lock     bool // the caller holds descriptors 3 to 9
		wrappers int
	}{
		{"one shim", first, []string{first, slurmDir}, true, false, 1},
		{"a copy after it", first, []string{first, second, slurmDir}, true, false, 1},
		{"a copy before it", first, []string{second, first, slurmDir}, true, false, 1},
		{"a copy beside an srun after it", first, []string{first, besideSrun, slurmDir}, true, false, 2},
		{"a copy beside an srun before it", first, []string{besideSrun, first, slurmDir}, true, false, 1},
		{"Slurm's directory before the shim", first, []string{slurmDir, first}, false, false, 1},
		{"Slurm's directory between two places of the shim", first, []string{first, slurmDir, first}, false, false, 1},
		{"the shim not on PATH", first, []string{slurmDir}, false, false, 1},
		{"the caller's descriptors", first, []string{first, slurmDir}, true, true, 1},
	} {
		var held *os.File
		if tc.lock {
			held = lock
		}
		out, err := submit(tc.shim, tc.path, held)
		calls := sbatch.take(t)
		if err != nil || out != "Submitted batch job 79\n" || len(calls) != 1 {
			t.Errorf("%s: %v, output %q, Slurm's sbatch ran %d times", tc.name, err, out, len(calls))
			continue
		}
		want := map[int]string{}
		for fd := 3; tc.lock && fd <= 9; fd++ {
			want[fd] = lock.Name()
		}
		if !maps.Equal(calls[0].Fds, want) {
			t.Errorf("%s: Slurm's sbatch has descriptors %v, want %v", tc.name, calls[0].Fds, want)
		}
		if read := calls[0].Reads >= firstLine; calls[0].Reads < 0 || read == tc.unread {
			t.Errorf("%s: %d read(2) calls before Slurm's sbatch started, its first line %d bytes: taken unread %v, want %v",
				tc.name, calls[0].Reads, firstLine, !read, tc.unread)
		}
		if files, _ := history.SpoolFor(db).Pending(); len(files) != tc.wrappers {
			t.Errorf("%s: %d records spooled, want %d", tc.name, len(files), tc.wrappers)
		}
	}
	fds, wrapper := filepath.Join(t.TempDir(), "fds"), filepath.Join(t.TempDir(), "wrapper")
	os.WriteFile(wrapper, []byte("#!/bin/sh\n{ echo std; for fd in 3 4 5 6 7 8 9; do [ -e /proc/$$/fd/$fd ] && echo $fd; done; } > "+fds+"\n"), 0o755)
	os.WriteFile(fds, nil, 0o644)
	if _, err := submit(first, []string{first, slurmDir}, lock, "MIGADVISOR_BIN="+wrapper); err != nil {
		t.Fatal(err)
	}
	sbatch.take(t)
	if open := strings.Fields(readFile(t, fds)); len(open) != 1 {
		t.Errorf("the wrapper has the caller's descriptors %v open, want none of 3 to 9", open[min(1, len(open)):])
	}
	for _, path := range [][]string{{first, second}, {first, besideSrun, second, besideSrun}, {besideSrun, besideSrun2, besideSrun}} {
		out, err := submit(path[0], path, nil)
		if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) || exit.ExitCode() != 127 || !strings.Contains(out, "no sbatch on PATH") {
			t.Errorf("PATH %v, no Slurm's sbatch: %v, output %q", path, err, out)
		}
		if files, _ := history.SpoolFor(db).Pending(); len(files) != 0 {
			t.Errorf("PATH %v, no Slurm's sbatch: %d records of a submission Slurm never saw", path, len(files))
		}
	}
	// PATH is split on colons alone: a pattern in it names no directory.
	globbed := t.TempDir()
	os.Mkdir(filepath.Join(globbed, "x"), 0o755)
	os.WriteFile(filepath.Join(globbed, "x", "sbatch"), []byte("#!/bin/sh\nexit 9\n"), 0o755)
	if out, err := submit(first, []string{first, globbed + "/*", slurmDir}, nil); err != nil || out != "Submitted batch job 79\n" {
		t.Errorf("a pattern on PATH: %v, output %q", err, out)
	}
	sbatch.take(t)
	// sh sbatch, in the shim's directory: the shim is that file, not the
	// first sbatch on PATH.
	cmd := exec.Command("/bin/sh", "sbatch", wrapperScript(t))
	cmd.Dir, cmd.Env = first, append(os.Environ(), "MIGADVISOR_BIN="+bin, "PATH="+slurmDir)
	if out, err := cmd.CombinedOutput(); err != nil || string(out) != "Submitted batch job 79\n" || len(sbatch.take(t)) != 1 {
		t.Errorf("sh sbatch: %v, output %q", err, out)
	}
	// A FIFO named sbatch is no sbatch: a read of it would wait for ever.
	fifoDir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifoDir, "sbatch"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(fifoDir, "sbatch"), 0o755)
	if out, err := submit(first, []string{first, fifoDir, slurmDir}, nil); err != nil || out != "Submitted batch job 79\n" {
		t.Errorf("a FIFO named sbatch before Slurm's: %v, output %q", err, out)
	}
	if calls := sbatch.take(t); len(calls) != 1 {
		t.Errorf("a FIFO named sbatch before Slurm's: Slurm's sbatch ran %d times", len(calls))
	}
}
