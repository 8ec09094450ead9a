package wrapper

import (
	"io"

	"github.com/migadvisor/migadvisor/slurm"
)

// Sbatch is Slurm's own sbatch, which the wrapper stands in front of.
type Sbatch interface {
	// Find is the path of Slurm's sbatch, never the wrapper itself.
	Find(getenv func(string) string) (string, error)
	// Run runs it and returns its exit status and what it wrote on stdout
	// (which also went to Command.Stdout: the job id is in it). An error
	// means it could not be run; the status is then the one to exit with.
	Run(Command) (status int, stdout []byte, err error)
}

// Command is one run of Slurm's sbatch.
type Command struct {
	Path           string
	Args           []string
	Env            []string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// SlurmSbatch is the real sbatch: $MIGADVISOR_SBATCH, else the first sbatch
// on PATH that is neither Self (the wrapper's own executable) nor the shim
// that started it.
type SlurmSbatch struct{ Self string }

// Find implements Sbatch with slurm.FindRealSbatch.
func (s SlurmSbatch) Find(getenv func(string) string) (string, error) {
	return slurm.FindRealSbatch(getenv, s.Self)
}

// Run implements Sbatch with slurm.RunSbatch.
func (SlurmSbatch) Run(c Command) (int, []byte, error) {
	return slurm.RunSbatch(c.Path, c.Args, c.Env, c.Stdin, c.Stdout, c.Stderr)
}
