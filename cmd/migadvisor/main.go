// Command migadvisor advises Slurm users which GPU profile (MIG slice or full
// GPU) a batch job should ask for. This package only wires the commands; the
// work is done in catalog, slurm, advisor and bench.
package main

import (
	"context"
	"os"
)

func main() {
	if isSbatchName(os.Args[0]) {
		// Installed as sbatch: no CLI parsing at all, Slurm's arguments only.
		os.Exit(wrapSbatch(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ()))
	}
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}
