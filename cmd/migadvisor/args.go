package main

import (
	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/internal/cliargs"
)

// hiddenAliases are the old names of top-level commands: they still work,
// but neither the command list nor "did you mean" shows them. "bench" is
// five things in this project (a Go package, Go benchmarks, make bench...);
// the command users see is "benchmark".
var hiddenAliases = map[string]string{"bench": "benchmark"}

// reorderArgs lets flags follow arguments and global flags follow the
// command (cliargs.Line.Reorder); an unknown command is a usage error.
func reorderArgs(app *cli.App, args []string) ([]string, error) {
	args, err := cliargs.Line{App: app, Aliases: hiddenAliases}.Reorder(args)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	return args, nil
}

// commandPath is the command (and subcommand) args name, "" for none.
func commandPath(app *cli.App, args []string) string {
	return cliargs.Line{App: app, Aliases: hiddenAliases}.CommandPath(args)
}
