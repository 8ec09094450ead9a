package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// reorderArgs moves flags in front of positional arguments, so that both
// "migadvisor sweep job.sh --out d" and "migadvisor sweep --out d job.sh" work:
// urfave/cli stops reading flags at the first positional argument. Global
// flags typed after the command move to the front too. Everything after "--"
// is left alone. An unknown command is a usage error.
func reorderArgs(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	globals, rest := splitFlags(app.Flags, args[1:], true)
	if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
		return append(append([]string{args[0]}, globals...), rest...), nil
	}
	path := []string{}
	commands := app.Commands
	var cmd *cli.Command
	for len(rest) > 0 {
		next := findCommand(commands, canonical(cmd, rest[0]))
		if next == nil {
			break
		}
		// The command's own name: a hidden alias reaches it, and its help
		// and errors name it as it is now.
		cmd, commands = next, next.Subcommands
		path, rest = append(path, next.Name), rest[1:]
	}
	if cmd == nil {
		if rest[0] == "help" {
			// "help CMD" is "CMD --help" (the help command itself is hidden).
			if len(rest) > 1 && findCommand(app.Commands, canonical(nil, rest[1])) != nil {
				named := append([]string{canonical(nil, rest[1])}, rest[2:]...)
				return append(append(append([]string{args[0]}, globals...), named...), "--help"), nil
			}
			return append(append([]string{args[0]}, globals...), "--help"), nil
		}
		return nil, usageError{"unknown command " + quote(rest[0]) + didYouMean(rest[0], app.Commands)}
	}
	if len(cmd.Subcommands) > 0 && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		return nil, usageError{"unknown " + strings.Join(path, " ") + " command " + quote(rest[0]) + didYouMean(rest[0], cmd.Subcommands)}
	}
	if cmd.SkipFlagParsing {
		return append(append(append([]string{args[0]}, globals...), path...), rest...), nil
	}
	// Global flags may also follow the command.
	moreGlobals, rest := extractFlags(app.Flags, rest)
	flags, positional := splitFlags(cmd.Flags, rest, false)
	out := append([]string{args[0]}, globals...)
	out = append(out, moreGlobals...)
	out = append(out, path...)
	out = append(out, flags...)
	return append(out, positional...), nil
}

// commandPath is the command (and subcommand) args name, "" for none:
// whatever flags stand before or between them.
func commandPath(app *cli.App, args []string) string {
	if len(args) < 2 {
		return ""
	}
	_, rest := splitFlags(app.Flags, args[1:], true)
	var path []string
	var cmd *cli.Command
	for commands := app.Commands; len(rest) > 0; rest = rest[1:] {
		c := findCommand(commands, canonical(cmd, rest[0]))
		if c == nil {
			break
		}
		cmd, path, commands = c, append(path, c.Name), c.Subcommands
	}
	return strings.Join(path, " ")
}

// hiddenAliases are the old names of top-level commands: they still work,
// but neither the command list nor "did you mean" shows them. "bench" is
// five things in this project (a Go package, Go benchmarks, make bench...);
// the command users see is "benchmark".
var hiddenAliases = map[string]string{"bench": "benchmark"}

// canonical is the command name a word typed after parent (nil: at the
// top level) stands for.
func canonical(parent *cli.Command, word string) string {
	if parent == nil {
		if name, ok := hiddenAliases[word]; ok {
			return name
		}
	}
	return word
}

// didYouMean names the command closest to a mistyped one (at most two
// edits away), or lists the choices when none is that close.
func didYouMean(typed string, commands []*cli.Command) string {
	best, bestDist := "", 3
	var names []string
	for _, c := range commands {
		if c.Hidden {
			continue
		}
		names = append(names, c.Name)
		if d := editDistance(typed, c.Name); d < bestDist {
			best, bestDist = c.Name, d
		}
	}
	if best != "" {
		return " (did you mean " + quote(best) + "?)"
	}
	return " (one of: " + strings.Join(names, ", ") + ")"
}

// editDistance is the Levenshtein distance between two short words.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// splitFlags separates flags (with their values) from positional arguments.
// With leadingOnly it stops at the first positional argument.
func splitFlags(defs []cli.Flag, args []string, leadingOnly bool) (flags, positional []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if leadingOnly {
				return flags, args[i:]
			}
			return flags, append(positional, args[i:]...)
		case isFlagWord(a):
			flags = append(flags, a)
			if takesValue(defs, a) && !strings.Contains(a, "=") && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		case leadingOnly:
			return flags, args[i:]
		default:
			positional = append(positional, a)
		}
	}
	return flags, positional
}

// extractFlags pulls the flags defined in defs out of args, wherever they are.
func extractFlags(defs []cli.Flag, args []string) (found, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return found, append(rest, args[i:]...)
		}
		if isFlagWord(a) && findFlag(defs, a) != nil {
			found = append(found, a)
			if takesValue(defs, a) && !strings.Contains(a, "=") && i+1 < len(args) {
				i++
				found = append(found, args[i])
			}
			continue
		}
		rest = append(rest, a)
	}
	return found, rest
}

func isFlagWord(a string) bool { return len(a) > 1 && a[0] == '-' && a != "--" }

func flagName(a string) string {
	name := strings.TrimLeft(a, "-")
	name, _, _ = strings.Cut(name, "=")
	return name
}

func findFlag(defs []cli.Flag, a string) cli.Flag {
	name := flagName(a)
	for _, f := range defs {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// takesValue reports whether a flag word consumes the next argument.
func takesValue(defs []cli.Flag, a string) bool {
	switch findFlag(defs, a).(type) {
	case nil, *cli.BoolFlag:
		return false
	default:
		return true
	}
}

func findCommand(commands []*cli.Command, name string) *cli.Command {
	for _, c := range commands {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

func quote(s string) string { return "\"" + s + "\"" }
