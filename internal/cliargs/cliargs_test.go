package cliargs

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// testLine is an app shaped like migadvisor: global flags, a command with
// flags, one with subcommands, one that parses none, a hidden one and a
// hidden alias.
func testLine() Line {
	app := &cli.App{
		Name:  "app",
		Flags: []cli.Flag{&cli.StringFlag{Name: "db"}, &cli.BoolFlag{Name: "quiet"}},
		Commands: []*cli.Command{
			{Name: "sweep", Flags: []cli.Flag{&cli.StringFlag{Name: "out", Aliases: []string{"o"}}, &cli.BoolFlag{Name: "submit"}}},
			{Name: "benchmark", Subcommands: []*cli.Command{
				{Name: "list"}, {Name: "run", Flags: []cli.Flag{&cli.StringFlag{Name: "suite"}}},
			}},
			{Name: "sbatch", SkipFlagParsing: true},
			{Name: "secret", Hidden: true},
		},
	}
	return Line{App: app, Aliases: map[string]string{"bench": "benchmark"}}
}

func TestReorder(t *testing.T) {
	for in, want := range map[string]string{
		"app":                                    "app",
		"app --db h.db":                          "app --db h.db",
		"app sweep job.sh --out d":               "app sweep --out d job.sh",
		"app sweep job.sh -o d --submit":         "app sweep -o d --submit job.sh",
		"app sweep job.sh --out=d":               "app sweep --out=d job.sh",
		"app sweep job.sh --db h.db --out d":     "app --db h.db sweep --out d job.sh",
		"app --quiet sweep job.sh --db=h.db":     "app --quiet --db=h.db sweep job.sh",
		"app sweep job.sh -- --out d":            "app sweep job.sh -- --out d",
		"app bench run --suite s":                "app benchmark run --suite s",
		"app benchmark run x --suite s":          "app benchmark run --suite s x",
		"app sbatch job.sh --db h.db":            "app sbatch job.sh --db h.db",
		"app --db h.db sbatch --time 1 job.sh":   "app --db h.db sbatch --time 1 job.sh",
		"app help sweep":                         "app sweep --help",
		"app help bench list":                    "app benchmark list --help",
		"app help":                               "app --help",
		"app help nothing":                       "app --help",
		"app sweep job.sh --unknown v":           "app sweep --unknown job.sh v", // an unknown flag takes no value
		"app benchmark --suite s":                "app benchmark --suite s",
		"app --db h.db -- sweep":                 "app --db h.db -- sweep",
		"app sweep job.sh --out":                 "app sweep --out job.sh",
		"app benchmark list extra --db h.db arg": "app --db h.db benchmark list extra arg",
	} {
		got, err := testLine().Reorder(strings.Fields(in))
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("Reorder(%q) = %q, %v; want %q", in, strings.Join(got, " "), err, want)
		}
	}
}

func TestReorderUnknownCommand(t *testing.T) {
	for in, want := range map[string]string{
		"app swep job.sh":     `unknown command "swep" (did you mean "sweep"?)`,
		"app benchmrk":        `unknown command "benchmrk" (did you mean "benchmark"?)`,
		"app foo":             `unknown command "foo" (one of: sweep, benchmark, sbatch)`,
		"app secre":           `unknown command "secre" (one of: sweep, benchmark, sbatch)`, // hidden: never suggested
		"app benchmark lst":   `unknown benchmark command "lst" (did you mean "list"?)`,
		"app bench foo":       `unknown benchmark command "foo" (one of: list, run)`,
		"app --db h.db swept": `unknown command "swept" (did you mean "sweep"?)`,
	} {
		got, err := testLine().Reorder(strings.Fields(in))
		var unknown *UnknownCommandError
		if !errors.As(err, &unknown) || err.Error() != want {
			t.Errorf("Reorder(%q) = %q, %v; want the error %q", in, got, err, want)
		}
	}
}

func TestCommandPath(t *testing.T) {
	for in, want := range map[string]string{
		"app":                       "",
		"app --db h.db":             "",
		"app sweep job.sh":          "sweep",
		"app --db h.db bench run x": "benchmark run",
		"app benchmark lst":         "benchmark",
		"app foo sweep":             "",
		"app help sweep":            "",
	} {
		if got := testLine().CommandPath(strings.Fields(in)); got != want {
			t.Errorf("CommandPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDidYouMeanCountsEdits(t *testing.T) {
	commands := []*cli.Command{{Name: "status"}, {Name: "su"}, {Name: "wait"}}
	for typed, want := range map[string]string{
		"stauts": "status", // two edits: a swap is two
		"sut":    "su",
		"wiat":   "wait",
		"s":      "su",
	} {
		if got := didYouMean(typed, commands); got != ` (did you mean "`+want+`"?)` {
			t.Errorf("didYouMean(%q) = %q, want %q", typed, got, want)
		}
	}
	if got := didYouMean("history", commands); got != " (one of: status, su, wait)" {
		t.Errorf("three edits away or more lists the choices, got %q", got)
	}
}

func TestSplitFlagsStopsAtTheFirstArgument(t *testing.T) {
	defs := []cli.Flag{&cli.StringFlag{Name: "db"}}
	flags, rest := splitFlags(defs, strings.Fields("--db h.db -v sweep --db x"), true)
	if !slices.Equal(flags, []string{"--db", "h.db", "-v"}) || !slices.Equal(rest, []string{"sweep", "--db", "x"}) {
		t.Errorf("splitFlags = %q, %q", flags, rest)
	}
}

func TestFlagMessageSuggestsAndSaysWhatAFlagNeeds(t *testing.T) {
	flags := []cli.Flag{&cli.BoolFlag{Name: "probe"}, &cli.StringFlag{Name: "session"}, &cli.StringFlag{Name: "time", Aliases: []string{"t"}},
		&cli.BoolFlag{Name: "secret", Hidden: true}}
	needs := map[string]string{"session": "a name (the session's job name)"}
	for in, want := range map[string]string{
		"flag provided but not defined: -prob":          "unknown flag --prob (did you mean --probe?)",
		"flag provided but not defined: -tme":           "unknown flag --tme (did you mean --time?)",
		"flag provided but not defined: -secrt":         "unknown flag --secrt",
		"flag provided but not defined: -bogus":         "unknown flag --bogus",
		"flag provided but not defined: -x":             "unknown flag -x", // not -t: fewer edits than letters typed
		"flag needs an argument: -session":              "--session needs a name (the session's job name)",
		"flag needs an argument: -time":                 "--time needs a value",
		"flag needs an argument: -t":                    "-t needs a value",
		`invalid value "soon" for flag -timeout: parse`: `invalid value "soon" for flag --timeout: parse`,
	} {
		if got := FlagMessage(errors.New(in), flags, needs); got != want {
			t.Errorf("FlagMessage(%q) = %q, want %q", in, got, want)
		}
	}
}
