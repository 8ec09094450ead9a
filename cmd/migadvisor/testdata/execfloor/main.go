// Command execfloor is the least any sbatch wrapper in Go can do: start,
// then exec $MIGADVISOR_SBATCH in its own place with the same arguments
// (no child, no wait, nothing read of its output). BenchmarkSbatchWrapper
// times it through the shim as the floor of every Go wrapper.
package main

import (
	"os"
	"syscall"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "sbatch" {
		args = args[1:]
	}
	sbatch := os.Getenv("MIGADVISOR_SBATCH")
	err := syscall.Exec(sbatch, append([]string{sbatch}, args...), os.Environ())
	os.Stderr.WriteString("execfloor: " + err.Error() + "\n")
	os.Exit(127)
}
