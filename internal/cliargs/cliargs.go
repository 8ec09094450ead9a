// Package cliargs reads a command line the way people type it, before
// urfave/cli parses it: flags may follow the arguments (urfave/cli stops
// reading flags at the first argument), global flags may follow the
// command, old command names still work, and a mistyped command is answered
// with the closest one, as is a mistyped flag of any command (FlagMessage).
package cliargs

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/internal/suggest"
)

// Line is a command line's grammar: the app's commands and flags, and the
// hidden aliases of its top-level commands (old name → command), which
// work but which neither the command list nor a suggestion shows.
type Line struct {
	App     *cli.App
	Aliases map[string]string
}

// UnknownCommandError is a command or subcommand the app does not have,
// with the closest one or the choices.
type UnknownCommandError struct{ Message string }

func (e *UnknownCommandError) Error() string { return e.Message }

// Reorder moves flags in front of positional arguments, so that both
// "app sweep job.sh --out d" and "app sweep --out d job.sh" work. Global
// flags typed after the command move to the front too, and a hidden alias
// becomes its command's name. Everything after "--" is left alone; "help
// CMD" is "CMD --help". An unknown command is an *UnknownCommandError.
func (l Line) Reorder(args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	globals, rest := splitFlags(l.App.Flags, args[1:], true)
	head := append([]string{args[0]}, globals...)
	if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
		return append(head, rest...), nil
	}
	cmd, path, rest := l.walk(rest)
	if cmd == nil {
		return l.help(head, rest)
	}
	if len(cmd.Subcommands) > 0 && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		return nil, unknown("unknown "+strings.Join(path, " ")+" command", rest[0], cmd.Subcommands)
	}
	if cmd.SkipFlagParsing {
		return append(append(head, path...), rest...), nil
	}
	moreGlobals, rest := extractFlags(l.App.Flags, rest)
	flags, positional := splitFlags(cmd.Flags, rest, false)
	out := append(append(head, moreGlobals...), path...)
	return append(append(out, flags...), positional...), nil
}

// help reads a line whose first word is no command: "help [CMD]", or a
// mistake.
func (l Line) help(head, rest []string) ([]string, error) {
	if rest[0] != "help" {
		return nil, unknown("unknown command", rest[0], l.App.Commands)
	}
	if len(rest) > 1 && findCommand(l.App.Commands, l.canonical(nil, rest[1])) != nil {
		named := append([]string{l.canonical(nil, rest[1])}, rest[2:]...)
		return append(append(head, named...), "--help"), nil
	}
	return append(head, "--help"), nil
}

// CommandPath is the command (and subcommand) args name, "" for none,
// whatever flags stand before or between them: "benchmark run".
func (l Line) CommandPath(args []string) string {
	if len(args) < 2 {
		return ""
	}
	_, rest := splitFlags(l.App.Flags, args[1:], true)
	_, path, _ := l.walk(rest)
	return strings.Join(path, " ")
}

// walk follows the commands and subcommands that words begin with: the
// last one, the names of all (as they are now: a hidden alias reaches its
// command, and help and errors name it so), and the words after them.
func (l Line) walk(words []string) (cmd *cli.Command, path, rest []string) {
	for commands := l.App.Commands; len(words) > 0; words = words[1:] {
		next := findCommand(commands, l.canonical(cmd, words[0]))
		if next == nil {
			break
		}
		cmd, path, commands = next, append(path, next.Name), next.Subcommands
	}
	return cmd, path, words
}

// canonical is the command name a word typed after parent (nil: at the
// top level) stands for.
func (l Line) canonical(parent *cli.Command, word string) string {
	if name, ok := l.Aliases[word]; ok && parent == nil {
		return name
	}
	return word
}

func unknown(what, typed string, commands []*cli.Command) error {
	return &UnknownCommandError{what + " " + quote(typed) + didYouMean(typed, commands)}
}

// didYouMean names the command closest to a mistyped one (at most two
// edits away), or lists the choices when none is that close.
func didYouMean(typed string, commands []*cli.Command) string {
	var names []string
	for _, c := range commands {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	if best := suggest.Nearest(typed, names, maxEdits); best != "" {
		return " (did you mean " + quote(best) + "?)"
	}
	return " (one of: " + strings.Join(names, ", ") + ")"
}

// maxEdits is how far a suggestion may be from what was typed.
const maxEdits = 2

func findCommand(commands []*cli.Command, name string) *cli.Command {
	for _, c := range commands {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

func quote(s string) string { return "\"" + s + "\"" }
