package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/app/wrapper"
)

func sbatchCommand() *cli.Command {
	return wrapperCommand("sbatch", "submit through Slurm's sbatch with advice at submission, and record the job in the history", false)
}

// sbatchBesideCommand is the wrapper beside Slurm's sbatch, which the shim
// runs itself (wrapper.Options.Beside): hidden, for the shim alone.
func sbatchBesideCommand() *cli.Command {
	return wrapperCommand(wrapper.BesideCommand, "the sbatch wrapper beside Slurm's sbatch (the shim runs it)", true)
}

// wrapperCommand runs the sbatch wrapper on sbatch's own command line,
// untouched (the command parses no flags), or prints its help for a lone
// --help (wrapper.AsksOwnHelp).
func wrapperCommand(name, usage string, beside bool) *cli.Command {
	help := helpText(name)
	return &cli.Command{
		Name:            name,
		Usage:           usage,
		ArgsUsage:       "[SBATCH OPTIONS...] [JOB.sh [ARGS...]]",
		Description:     help,
		Hidden:          beside,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if wrapper.AsksOwnHelp(args) {
				fmt.Fprintf(c.App.Writer, "migadvisor %s %s\n\n%s\n", name, c.Command.ArgsUsage, help)
				return nil
			}
			opt := wrapper.ProcessOptions(args, os.Environ(), os.Stdin, c.App.Writer, c.App.ErrWriter)
			opt.Beside = beside
			return silentExit(wrapper.Run(c.Context, opt))
		},
	}
}
