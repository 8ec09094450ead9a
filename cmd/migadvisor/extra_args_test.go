package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// noArgCommands are the paths ("benchmark run") of every command that
// takes no arguments: those that run something and name none in their
// usage (the sbatch wrapper parses its own command line).
func noArgCommands(cmds []*cli.Command, parent string) []string {
	var paths []string
	for _, c := range cmds {
		path := strings.TrimSpace(parent + " " + c.Name)
		if c.Action != nil && c.ArgsUsage == "" && !c.SkipFlagParsing {
			paths = append(paths, path)
		}
		paths = append(paths, noArgCommands(c.Subcommands, path)...)
	}
	return paths
}

// A command that takes no arguments refuses one as a usage error (one with
// subcommands, as an unknown subcommand) before it does anything:
// 'benchmark run NAME' submitted the whole suite, 'doctor extra' exited 0.
func TestCommandsThatTakeNoArgumentsRefuseThem(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "h.db"))
	t.Chdir(t.TempDir()) // where a benchmark would be written, were it run
	paths := noArgCommands(newApp(io.Discard, io.Discard).Commands, "")
	if len(paths) < 5 {
		t.Fatalf("commands without arguments: %q", paths)
	}
	for _, path := range paths {
		fake := slurmtest.New()
		_, errOut, code := migadvisorWith(t, fake, append(strings.Fields(path), "extra")...)
		refused := strings.Contains(errOut, path+" takes no arguments") || strings.Contains(errOut, "unknown "+path+" command")
		if code != exitUsage || !refused {
			t.Errorf("%s extra: exit %d, %q", path, code, errOut)
		}
		if calls := fake.Calls("sbatch"); len(calls) > 0 {
			t.Errorf("%s extra: sbatch ran %d times", path, len(calls))
		}
	}
}

// A workload's name given as an argument is a --workloads the user meant.
func TestBenchmarkSuggestsWorkloadsForAWorkloadsName(t *testing.T) {
	isolate(t)
	t.Chdir(t.TempDir())
	for _, sub := range []string{"list", "write", "run"} {
		fake := slurmtest.New()
		_, errOut, code := migadvisorWith(t, fake, "benchmark", sub, "--no-wait", "pytorch_mnist_simplecnn")
		if sub != "run" {
			_, errOut, code = migadvisorWith(t, fake, "benchmark", sub, "pytorch_mnist_simplecnn")
		}
		if code != exitUsage || !strings.Contains(errOut, "--workloads pytorch_mnist_simplecnn") || len(fake.Calls("sbatch")) > 0 {
			t.Errorf("benchmark %s pytorch_mnist_simplecnn: exit %d, %q", sub, code, errOut)
		}
	}
	// A name no workload of the suite has is no --workloads to suggest.
	if _, errOut, code := migadvisorWith(t, slurmtest.New(), "benchmark", "list", "nope"); code != exitUsage || strings.Contains(errOut, "--workloads") {
		t.Errorf("benchmark list nope: exit %d, %q", code, errOut)
	}
}
