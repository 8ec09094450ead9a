package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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

// The shim reads nothing of the sbatch it finds first on PATH, which cost
// a read(2) per byte of Slurm's binary up to its first newline: it runs it
// with descriptor 8 open on it. A copy of the shim run so is a link in a
// chain: Slurm's sbatch runs once, the wrapper once, and nothing is left on
// descriptor 8; two copies with no Slurm's sbatch after them end in an
// error, not in running each other, and no record. A caller's own descriptor 8 (a lock)
// reaches sbatch as it was, and the shim reads each candidate instead.
func TestSbatchShimReadsNothingOfSlurmsSbatch(t *testing.T) {
	isolate(t)
	bin := sbatchBinary(t)
	first, second, slurmDir := t.TempDir(), t.TempDir(), t.TempDir()
	shim, _ := os.ReadFile(filepath.Join(packageDir, "../../scripts/sbatch"))
	os.WriteFile(filepath.Join(first, "sbatch"), shim, 0o755)
	os.WriteFile(filepath.Join(second, "sbatch"), shim, 0o755)
	t.Setenv("FAKESBATCH_ID", "79")
	sbatch := newFakeSbatch(t, slurmDir)
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	lock, err := os.Create(filepath.Join(t.TempDir(), "lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	script := wrapperScript(t)
	for _, tc := range []struct {
		name string
		path []string
		lock bool   // the caller holds descriptor 8
		fd8  string // what Slurm's sbatch has open on it
	}{
		{"one shim", []string{first, slurmDir}, false, sbatch.Path},
		{"a second copy after it", []string{first, second, slurmDir}, false, ""},
		{"a second copy before it", []string{second, first, slurmDir}, false, ""},
		{"the caller's descriptor 8", []string{first, slurmDir}, true, lock.Name()},
		{"the caller's descriptor 8, two copies", []string{first, second, slurmDir}, true, lock.Name()},
	} {
		os.RemoveAll(db + ".spool")
		cmd := exec.Command(filepath.Join(tc.path[0], "sbatch"), script)
		cmd.Env = append(os.Environ(), "MIGADVISOR_BIN="+bin, "PATH="+strings.Join(tc.path, ":")+":"+os.Getenv("PATH"))
		if tc.lock {
			cmd.ExtraFiles = []*os.File{5: lock} // descriptor 3+5
		}
		out, err := cmd.CombinedOutput()
		calls := sbatch.take(t)
		if err != nil || string(out) != "Submitted batch job 79\n" || len(calls) != 1 {
			t.Fatalf("%s: %v, output %q, Slurm's sbatch ran %d times", tc.name, err, out, len(calls))
		}
		if calls[0].Fd8 != tc.fd8 {
			t.Errorf("%s: Slurm's sbatch has %q on descriptor 8, want %q", tc.name, calls[0].Fd8, tc.fd8)
		}
		var files []string
		for deadline := time.Now().Add(5 * time.Second); len(files) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			files, _ = history.SpoolFor(db).Pending()
		}
		time.Sleep(50 * time.Millisecond) // a second wrapper's record, if one ran
		if files, _ = history.SpoolFor(db).Pending(); len(files) != 1 {
			t.Errorf("%s: %d records spooled, want the one wrapper's", tc.name, len(files))
		}
	}
	os.RemoveAll(db + ".spool")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(first, "sbatch"), script)
	cmd.Env = append(os.Environ(), "MIGADVISOR_BIN="+bin, "PATH="+first+":"+second)
	out, err := cmd.CombinedOutput()
	if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) || exit.ExitCode() != 127 || ctx.Err() != nil ||
		!strings.Contains(string(out), "Slurm's sbatch is not on PATH") {
		t.Errorf("two copies and no Slurm's sbatch: %v (%v), output %q", err, ctx.Err(), out)
	}
	time.Sleep(200 * time.Millisecond) // the wrapper left running, if it records
	if files, _ := history.SpoolFor(db).Pending(); len(files) != 0 {
		t.Errorf("two copies and no Slurm's sbatch: %d records of a submission Slurm never saw", len(files))
	}
}
