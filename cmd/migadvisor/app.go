package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/cliargs"
	"github.com/migadvisor/migadvisor/internal/xdg"
	"github.com/migadvisor/migadvisor/slurm"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

// Exit codes, documented in docs/user/exit-codes.md.
const (
	exitOK      = 0
	exitFailure = 1 // bad input, lint errors, missing NVML, a failed operation
	exitUsage   = 2 // unknown command or flag, missing argument
	// exitInterrupted is the shell's status for a command stopped by Ctrl-C.
	exitInterrupted = 130
)

// usageError is a mistake in how the command was called.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// silentExit ends the command with a code after it has printed what it had to.
type silentExit int

func (e silentExit) Error() string { return fmt.Sprintf("exit %d", int(e)) }

func run(args []string, stdout, stderr io.Writer) int {
	return runWith(appDeps{}, args, stdout, stderr)
}

// appDeps are what the commands reach outside this process, for tests to
// put fakes in: Slurm's commands (nil: exec them).
type appDeps struct {
	Slurm slurm.Runner
}

const depsKey = "deps"

func depsOf(c *cli.Context) appDeps {
	d, _ := c.App.Metadata[depsKey].(appDeps)
	return d
}

// runWith runs the command line args with deps, and gives its exit status.
func runWith(deps appDeps, args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	app.Metadata = map[string]any{depsKey: deps}
	path := commandPath(app, args)
	args, err := reorderArgs(app, args)
	if err == nil {
		err = app.Run(args)
	}
	return exitCode(err, stderr, path)
}

// exitCode prints an error and gives the exit status; a usage error points
// at the help of the command it is about (path: "benchmark run").
func exitCode(err error, stderr io.Writer, path string) int {
	var silent silentExit
	var usage usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &silent):
		return int(silent)
	case errors.As(err, &usage):
		help := "migadvisor --help"
		if path != "" {
			help = "migadvisor " + path + " --help"
		}
		fmt.Fprintf(stderr, "migadvisor: %s\nRun '%s' for usage.\n", usage.msg, help)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "migadvisor: %s\n", err)
		return exitFailure
	}
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:        "migadvisor",
		Usage:       "pick the right MIG slice or GPU for a Slurm job, by evidence",
		Version:     version,
		Description: helpText("migadvisor"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "site", EnvVars: []string{"MIGADVISOR_SITE"},
				Usage: "site: a built-in name (" + strings.Join(catalog.BuiltinNames(), ", ") + ") or a site TOML file; default: $XDG_CONFIG_HOME/migadvisor/site.toml, " + catalog.SystemSiteFile + ", then " + catalog.DefaultSite},
			&cli.StringFlag{Name: "db", EnvVars: []string{"MIGADVISOR_DB"}, Value: defaultDBPath(),
				Usage: "history database (SQLite; created 0600 in a 0700 directory)"},
		},
		Commands: slices.DeleteFunc([]*cli.Command{
			catalogCommand(),
			lintCommand(),
			suCommand(),
			sweepCommand(),
			statusCommand(),
			waitCommand(),
			collectCommand(),
			publishCommand(),
			trackCommand(),
			historyCommand(),
			recommendCommand(),
			benchmarkCommand(),
			accuracyCommand(),
			docsCommand(),
			reportCommand(),
			planCommand(),
			doctorCommand(),
			sbatchCommand(),
			sbatchBesideCommand(),
			monitorCommand(),
			emulateCommand(),
			measureSliceCommand(),
		}, func(c *cli.Command) bool { return c == nil }), // docs and report, in the lean wrapper binary
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		ExitErrHandler:       func(*cli.Context, error) {}, // run() reports errors
	}
	app.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return flagUsageError(err, app.Flags) }
	for _, cmd := range app.Commands {
		withUsageErrors(cmd, app.Flags)
	}
	return app
}

// withUsageErrors makes flag errors of a command (and its subcommands)
// usage errors, each suggesting the closest of the command's own flags
// and the app's global ones, which may follow the command.
func withUsageErrors(cmd *cli.Command, global []cli.Flag) {
	flags := slices.Concat(cmd.Flags, global, []cli.Flag{cli.HelpFlag})
	cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return flagUsageError(err, flags) }
	for _, sub := range cmd.Subcommands {
		withUsageErrors(sub, global)
	}
}

// defaultDBPath is $XDG_DATA_HOME/migadvisor/history.db.
func defaultDBPath() string { return xdg.HistoryDB() }

// dbPath is the history database: --db, MIGADVISOR_DB, or the XDG default.
func dbPath(c *cli.Context) string {
	if p := c.String("db"); p != "" {
		return p
	}
	return defaultDBPath()
}

// oneArg returns the single positional argument a command needs.
func oneArg(c *cli.Context, name string) (string, error) {
	switch c.NArg() {
	case 1:
		return c.Args().First(), nil
	case 0:
		return "", usageError{fmt.Sprintf("%s needs %s", c.Command.FullName(), name)}
	default:
		return "", usageError{fmt.Sprintf("%s takes one %s, not %d arguments", c.Command.FullName(), name, c.NArg())}
	}
}

// noArgs refuses the arguments of a command that takes none: urfave/cli
// would drop them, and the command would do its whole work as if they
// were not there ('doctor extra' checked and exited 0).
func noArgs(c *cli.Context) error {
	if c.NArg() == 0 {
		return nil
	}
	return usageError{fmt.Sprintf("%s takes no arguments, not %q", commandName(c), c.Args().First())}
}

// commandName is the command c runs as the user types it ("benchmark
// run"): urfave/cli's FullName gives a subcommand's own name alone.
func commandName(c *cli.Context) string {
	var names []string
	for _, ctx := range c.Lineage() {
		if ctx.Command != nil && ctx.Command.Name != "" && ctx.Command.Name != c.App.Name {
			names = append([]string{ctx.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}

// flagValues say what a flag given no value needs, where "a value" says
// too little.
var flagValues = map[string]string{
	"session": sessionNeedsName,
}

// sessionNeedsName is what --session needs, typed with none or with a flag
// in its place.
const sessionNeedsName = "a name (the session's job name, e.g. sys/dashboard/sys/jupyter for an Open OnDemand app, " +
	"interactive for salloc; 'migadvisor history --sessions' lists yours)"

// flagUsageError is a flag error as a usage error, naming long flags as
// the user types them (--bogus, not -bogus), an unknown one with the
// closest of flags (cliargs.FlagMessage).
func flagUsageError(err error, flags []cli.Flag) error {
	return usageError{cliargs.FlagMessage(err, flags, flagValues)}
}
