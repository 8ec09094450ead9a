// Command migadvisor-sbatch is the sbatch wrapper alone, for the scripts/
// sbatch shim of login nodes, which runs it on every submission: the
// wrapper (advisor/app/wrapper) and nothing else of migadvisor, built without
// cgo. It reads advice indexes, never a history database, so it starts in
// a fraction of the full binary's time. 'migadvisor sbatch --help' says
// what it does. The cli_filter.lua of login nodes runs it too, inside
// sbatch: filter-advise before the job is submitted, filter-record after.
package main

import (
	"fmt"
	"os"

	"github.com/migadvisor/migadvisor/advisor/app/wrapper"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && (args[0] == wrapper.FilterAdviseCommand || args[0] == wrapper.FilterRecordCommand) {
		// Slurm's cli_filter/lua plugin, inside sbatch (scripts/cli_filter.lua).
		os.Exit(wrapper.FilterMain(args[0], args[1:]))
	}
	beside := len(args) > 0 && args[0] == wrapper.BesideCommand // the shim: "$migadvisor" sbatch-beside "$@"
	if len(args) > 0 && (args[0] == "sbatch" || beside) {       // or, applying the advice, "$migadvisor" sbatch "$@"
		args = args[1:]
	}
	if wrapper.AsksOwnHelp(args) {
		fmt.Println("migadvisor-sbatch [SBATCH OPTIONS...] [JOB.sh [ARGS...]]: sbatch with advice at submission; see 'migadvisor sbatch --help'")
		return
	}
	os.Exit(wrapper.Main(args, beside))
}
