package cliargs

import (
	"strings"

	"github.com/urfave/cli/v2"
)

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

func findFlag(defs []cli.Flag, a string) cli.Flag {
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
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
