// Command migadvisor advises Slurm users which GPU profile (MIG slice or full
// GPU) a batch job should ask for. This package only wires the commands; the
// work is done in catalog, slurm, advisor and bench.
package main

import (
	"os"

	"github.com/migadvisor/migadvisor/advisor/app/wrapper"
)

func main() {
	if wrapper.IsSbatchName(os.Args[0]) {
		// Installed as sbatch: no CLI parsing at all, Slurm's arguments only.
		os.Exit(wrapper.Main(os.Args[1:], false))
	}
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}
