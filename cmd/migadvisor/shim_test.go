package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSbatchShim runs scripts/sbatch as a login node would: first on PATH,
// Slurm's sbatch (a stub that logs its argv and environment) after it.
func TestSbatchShim(t *testing.T) {
	isolate(t)
	bin := sbatchBinary(t)
	shimDir, slurmDir, installed := t.TempDir(), t.TempDir(), t.TempDir()
	shim, _ := os.ReadFile(filepath.Join(packageDir, "../../scripts/sbatch"))
	os.WriteFile(filepath.Join(shimDir, "sbatch"), shim, 0o755)
	// As make install lays it out: PREFIX/libexec/migadvisor/{sbatch,migadvisor-sbatch}.
	os.WriteFile(filepath.Join(installed, "sbatch"), shim, 0o755)
	os.Symlink(bin, filepath.Join(installed, "migadvisor-sbatch"))
	log := filepath.Join(slurmDir, "log")
	os.WriteFile(filepath.Join(slurmDir, "sbatch"), []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '"+log+
		"'\nenv | grep -c '^MIGADVISOR_SHIM=' >> '"+log+"'\necho 'Submitted batch job 77'\n"), 0o755)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	t.Setenv("PATH", shimDir+":"+slurmDir+":"+os.Getenv("PATH"))
	args := []string{"--export=ALL,X=1 2", "-J", "it's", wrapperScript(t), "a b"}
	for _, tc := range []struct {
		name   string
		env    []string
		record bool
	}{
		{"through migadvisor", []string{"MIGADVISOR_BIN=" + bin}, true},
		{"through the migadvisor-sbatch beside it", []string{"PATH=" + installed + ":" + slurmDir + ":" + os.Getenv("PATH")}, true},
		{"migadvisor missing", []string{"MIGADVISOR_BIN=/nonexistent/migadvisor"}, false},
		{"disabled", []string{"MIGADVISOR_BIN=" + bin, "MIGADVISOR_DISABLE=1"}, false},
	} {
		os.RemoveAll(os.Getenv("MIGADVISOR_DB") + ".spool")
		cmd := exec.Command("sbatch", args...)
		cmd.Env = append(os.Environ(), tc.env...)
		out, err := cmd.CombinedOutput()
		logged, _ := os.ReadFile(log)
		if err != nil || string(out) != "Submitted batch job 77\n" || string(logged) != strings.Join(args, "\n")+"\n0\n" {
			t.Errorf("%s: %v, output %q, Slurm's sbatch got %q", tc.name, err, out, logged)
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
	os.WriteFile(filepath.Join(slurmDir, "sbatch"), []byte("#!/bin/sh\necho \"Slurm's sbatch $*\"\n"), 0o755)
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
