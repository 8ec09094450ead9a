package wrapper

import (
	"context"
	"os"
	"time"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/xdg"
)

// Main is one submission of this process: its arguments (sbatch's), its
// environment, working directory and standard streams, Slurm's sbatch, and
// the indexes and site files on disk. It returns the exit status.
func Main(args []string) int {
	self, _ := os.Executable()
	wd, _ := os.Getwd() // "": paths are then the process's own, and --output directories go unchecked
	return Run(context.Background(), Options{
		Args: args, Env: os.Environ(), Now: time.Now, WorkDir: wd, DefaultDB: xdg.HistoryDB(),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Sbatch: SlurmSbatch{Self: self}, LoadSite: catalog.Resolve,
	})
}
