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

const sbatchHelp = `Runs Slurm's sbatch with the arguments, standard input and output it was
given, and exits with sbatch's status, with migadvisor's advice on stderr.
On login nodes it is installed as "sbatch" through the scripts/sbatch shim,
which runs Slurm's sbatch itself, in its own place, and the wrapper beside
it in the background ('migadvisor sbatch-beside'); "sbatch --help" is
Slurm's own help.

The advice: when the runs of this script (in your advice index, beside
your history, and in the site's, published beside [history] site_db) show
a cheaper profile that is safe for it, or a safe one instead of a profile
it ran out of memory on, it says so with the change to make, and prints the
script's lint errors and what the job will not get as its script reads (an
#SBATCH line sbatch ignores, more GPU processes than GPUs). Nothing when
there is nothing useful to say.

  --mig-apply, MIGADVISOR_APPLY=1   submit with the advice's change (the GPU
                                    request, and --partition, --time or --mem
                                    where it needs others), shown on stderr;
                                    the shim then runs this command in
                                    sbatch's place

The record: beside sbatch, the submission (script fingerprint, profile
asked for, the job's name and directory, the time) goes to the history's
spool without the job id; 'migadvisor collect', 'status' or 'wait' without
job ids finds the job in accounting and links it. Run in sbatch's place
(this command itself, --mig-apply), it advises before sbatch runs and
records the id sbatch prints.

It opens no database: the indexes are files that 'collect', 'track' and
'wait' (yours) and 'collect --publish' (the site's) write. Nothing it does
can stop the submission: advice has a 150 ms deadline and any problem (a
missing, truncated or corrupt index, a bad site file, a slow file system)
skips it with at most one line on stderr, none with MIGADVISOR_QUIET=1. MIGADVISOR_DISABLE=1 makes it a pure, silent
pass-through.

The real sbatch is $MIGADVISOR_SBATCH, else the first sbatch on PATH that is
neither migadvisor nor the shim that started it.

Examples:
   migadvisor sbatch job.sh
   migadvisor sbatch --mig-apply job.sh --epochs 3
   MIGADVISOR_APPLY=1 sbatch job.sh            # with the shim first on PATH
   migadvisor sbatch --parsable -p gpu --gres=gpu:a100_20g:1 job.sh

Exit status: sbatch's own; 127 when no sbatch can be found.`

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
