package wrapper

import (
	"os"
	"path/filepath"

	"github.com/migadvisor/migadvisor/slurm"
)

// AsksOwnHelp reports whether args ask the wrapper for its own help: a lone
// --help or -h typed to it. Started by the scripts/sbatch shim (which sets
// slurm.ShimEnv), the user typed "sbatch --help": that is Slurm's own help,
// passed through.
func AsksOwnHelp(args []string) bool {
	return os.Getenv(slurm.ShimEnv) == "" && len(args) == 1 && (args[0] == "--help" || args[0] == "-h")
}

// IsSbatchName reports whether the program was started as "sbatch": a link
// to it, or a copy, installed in sbatch's place.
func IsSbatchName(argv0 string) bool {
	return filepath.Base(argv0) == "sbatch"
}
