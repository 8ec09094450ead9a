package cliargs

import (
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/internal/suggest"
)

// Go's flag package, which urfave/cli parses flags with, names a flag with
// one dash, whatever was typed: "flag provided but not defined: -bogus".
var (
	undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(.+)$`)
	missingValue  = regexp.MustCompile(`^flag needs an argument: -+(.+)$`)
	flagName      = regexp.MustCompile(`(for flag )-([A-Za-z0-9][A-Za-z0-9-]+)`)
)

// FlagMessage rewords an error of Go's flag package as users type flags,
// long ones with two dashes: an unknown flag with the closest of flags (at
// most two edits away: "unknown flag --prob (did you mean --probe?)"), a
// flag given no value with what it needs (needs[name], else "a value":
// "--session needs a name (...)"), a bad value naming its flag.
func FlagMessage(err error, flags []cli.Flag, needs map[string]string) string {
	msg := err.Error()
	if m := undefinedFlag.FindStringSubmatch(msg); m != nil {
		return "unknown flag " + dashed(m[1]) + didYouMeanFlag(m[1], flags)
	}
	if m := missingValue.FindStringSubmatch(msg); m != nil {
		need := needs[m[1]]
		if need == "" {
			need = "a value"
		}
		return dashed(m[1]) + " needs " + need
	}
	return flagName.ReplaceAllString(msg, "$1--$2")
}

// didYouMeanFlag names the visible flag closest to a mistyped one, or
// nothing: a command's flags are too many to list (its --help does).
func didYouMeanFlag(typed string, flags []cli.Flag) string {
	var names []string
	for _, f := range flags {
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		for _, n := range f.Names() {
			if len(n) > 1 {
				names = append(names, n)
			}
		}
	}
	// Fewer edits than letters typed: -x is no typo of --db.
	typed = strings.TrimLeft(typed, "-")
	if best := suggest.Nearest(typed, names, min(maxEdits, len(typed)-1)); best != "" {
		return " (did you mean " + dashed(best) + "?)"
	}
	return ""
}

// dashed is a flag's name as typed: --name, or -n for one letter.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
