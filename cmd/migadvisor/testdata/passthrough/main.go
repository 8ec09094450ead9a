// Command passthrough is the least an sbatch wrapper that runs Slurm's
// sbatch as a child can do: start, run $MIGADVISOR_SBATCH with the same
// arguments and streams, keep a copy of its output (where the job id is),
// and exit with its status. BenchmarkSbatchWrapper times it through the
// shim as the floor of that design.
package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "sbatch" {
		args = args[1:]
	}
	var out bytes.Buffer
	cmd := exec.Command(os.Getenv("MIGADVISOR_SBATCH"), args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, io.MultiWriter(os.Stdout, &out), os.Stderr
	if err := cmd.Run(); err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			os.Exit(exit.ExitCode())
		}
		os.Exit(127)
	}
}
