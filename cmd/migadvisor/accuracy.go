package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/app/accuracy"
	"github.com/migadvisor/migadvisor/catalog"
)

func accuracyCommand() *cli.Command {
	return &cli.Command{
		Name:        "accuracy",
		Usage:       "how well migadvisor predicts runtimes, beside simple baselines",
		ArgsUsage:   "[TABLE.csv ...]",
		Description: helpText("accuracy"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "gpu", Usage: "the GPU model the tables were measured on, instead of the site's profiles: " + strings.Join(catalog.BuiltinModelNames(), ", ") + " (or an alias, as A100-40GB)"},
			jsonFlag(),
		},
		Action: bindAction(accuracyOptionsFrom, runAccuracy),
	}
}

// accuracyOptions are accuracy's flags: the tables, if any, and the GPU
// model they were measured on.
type accuracyOptions struct {
	Global globalFlags
	Tables []string // none: the site's reference benchmarks
	GPU    string   // "" for the site's profiles
	JSON   bool
}

func accuracyOptionsFrom(c *cli.Context) (accuracyOptions, error) {
	o := accuracyOptions{Global: globalFlagsFrom(c), Tables: c.Args().Slice(), GPU: c.String("gpu"), JSON: c.Bool("json")}
	if c.IsSet("gpu") && len(o.Tables) == 0 {
		return accuracyOptions{}, usageError{"--gpu names the GPU model the tables were measured on: give TABLE.csv"}
	}
	if c.IsSet("gpu") && strings.TrimSpace(o.GPU) == "" {
		return accuracyOptions{}, usageError{"--gpu needs a GPU model (" + strings.Join(catalog.BuiltinModelNames(), ", ") + ")"}
	}
	return o, nil
}

// runAccuracy scores the model and the baselines on each set
// (accuracy.CompareTables) and prints the table, then whether migadvisor
// beats the best baseline on each set and protocol.
func runAccuracy(_ context.Context, o accuracyOptions, w outWriters) error {
	site, err := accuracySite(o)
	if err != nil {
		return err
	}
	rows, err := accuracy.CompareTables(site, o.Tables, func(table string) {
		fmt.Fprintf(w.Err, "migadvisor: %s: left out: no job in it was measured on two profiles or more\n", table)
	})
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(w.Out, rows)
	}
	return accuracy.WriteText(w.Out, rows)
}

// accuracySite is the site the times were measured at: --gpu's model, else
// the site in use.
func accuracySite(o accuracyOptions) (*catalog.Site, error) {
	if o.GPU == "" {
		return o.Global.loadSite()
	}
	site, err := catalog.ModelSite(o.GPU)
	if err != nil {
		return nil, usageError{"--gpu: " + err.Error()}
	}
	return site, nil
}
