package wrapper

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/xdg"
)

// ProcessOptions are the options of one submission by this process: its
// arguments (sbatch's), environment and standard streams as given, its
// working directory, Slurm's sbatch, and the indexes and site files on disk.
func ProcessOptions(args, env []string, stdin io.Reader, stdout, stderr io.Writer) Options {
	self, _ := os.Executable()
	wd, _ := os.Getwd() // "": paths are then the process's own, and --output directories go unchecked
	return Options{
		Args: args, Env: env, Now: time.Now, WorkDir: wd, DefaultDB: xdg.HistoryDB(),
		Stdin: stdin, Stdout: stdout, Stderr: stderr,
		Sbatch: SlurmSbatch{Self: self}, LoadSite: catalog.Resolve,
	}
}

// Main is one submission of this process with its own environment and
// standard streams (beside Slurm's sbatch: Options.Beside); it returns the
// exit status.
func Main(args []string, beside bool) int {
	opt := ProcessOptions(args, os.Environ(), os.Stdin, os.Stdout, os.Stderr)
	opt.Beside = beside
	return Run(context.Background(), opt)
}
