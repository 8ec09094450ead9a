// Command migadvisor advises Slurm users which GPU profile (MIG slice or full
// GPU) a batch job should ask for. This package only wires the commands; the
// work is done in catalog, slurm, advisor and bench.
package main

import "os"

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}
