package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/wrapper"
	"github.com/migadvisor/migadvisor/slurm"
)

var sbatchHelp = helpText("sbatch")

func sbatchCommand() *cli.Command {
	return &cli.Command{
		Name:            "sbatch",
		Usage:           "submit through Slurm's sbatch with advice at submission, and record the job in the history",
		ArgsUsage:       "[SBATCH OPTIONS...] [JOB.sh [ARGS...]]",
		Description:     sbatchHelp,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			opt := sbatchOptionsFrom(c)
			if opt.help {
				fmt.Fprintf(c.App.Writer, "migadvisor sbatch %s\n\n%s\n", c.Command.ArgsUsage, sbatchHelp)
				return nil
			}
			return silentExit(wrapSbatch(c.Context, opt.args, os.Stdin, c.App.Writer, c.App.ErrWriter, os.Environ()))
		},
	}
}

// sbatchBesideCommand is the wrapper beside Slurm's sbatch, which the shim
// runs itself (wrapper.Options.Beside): hidden, for the shim alone.
func sbatchBesideCommand() *cli.Command {
	const help = `The sbatch shim (scripts/sbatch) runs Slurm's sbatch itself, in its own
place, and this in the background with the same arguments: the advice of
'migadvisor sbatch' on stderr, and the submission's record without its job
id, which collect links to the job. It never runs sbatch, and exits 0.

Examples:
   migadvisor sbatch-beside job.sh </dev/null >/dev/null &   # as the shim runs it`
	return &cli.Command{
		Name:            wrapper.BesideCommand,
		Usage:           "the sbatch wrapper beside Slurm's sbatch (the shim runs it)",
		ArgsUsage:       "[SBATCH OPTIONS...] [JOB.sh [ARGS...]]",
		Description:     help,
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			if opt := sbatchOptionsFrom(c); opt.help {
				fmt.Fprintf(c.App.Writer, "migadvisor %s %s\n\n%s\n", wrapper.BesideCommand, c.Command.ArgsUsage, help)
				return nil
			}
			opt := wrapper.ProcessOptions(c.Args().Slice(), os.Environ(), os.Stdin, c.App.Writer, c.App.ErrWriter)
			opt.Beside = true
			return silentExit(wrapper.Run(c.Context, opt))
		},
	}
}

// sbatchOptions is the wrapper's command line: sbatch's own, untouched (the
// command parses no flags), or a lone --help for this page. Started by the
// scripts/sbatch shim (which sets slurm.ShimEnv), the user typed
// "sbatch --help": that is Slurm's own help, passed through.
type sbatchOptions struct {
	args []string
	help bool
}

func sbatchOptionsFrom(c *cli.Context) sbatchOptions {
	args := c.Args().Slice()
	viaShim := os.Getenv(slurm.ShimEnv) != ""
	return sbatchOptions{args: args, help: !viaShim && len(args) == 1 && (args[0] == "--help" || args[0] == "-h")}
}

// wrapSbatch runs the wrapper in this process's environment: its
// arguments, environment, working directory and standard streams, Slurm's
// sbatch and the advice indexes and site files on disk.
func wrapSbatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	return wrapper.Run(ctx, wrapper.ProcessOptions(args, env, stdin, stdout, stderr))
}

// isSbatchName reports whether the program was started as "sbatch" (a link
// or copy of migadvisor installed in its place).
func isSbatchName(argv0 string) bool {
	return filepath.Base(argv0) == "sbatch"
}
