package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/accuracy"
	"github.com/migadvisor/migadvisor/catalog"
)

func accuracyCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:        "accuracy",
		Usage:       "how well migadvisor predicts runtimes, beside the naive model",
		ArgsUsage:   "[TABLE.csv ...]",
		Description: helpText("accuracy"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "gpu", Usage: "the GPU model the tables were measured on, instead of the site's profiles: " + strings.Join(catalog.BuiltinModelNames(), ", ") + " (or an alias, as A100-40GB)"},
			jsonFlag(),
		},
		Action: bindAction(accuracyOptionsFrom, runAccuracy),
	})
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

// runAccuracy scores the model (accuracy.Compare) on each set and prints
// the table, then whether migadvisor beats the naive model on each.
func runAccuracy(_ context.Context, o accuracyOptions, w outWriters) error {
	site, err := accuracySite(o)
	if err != nil {
		return err
	}
	var rows []accuracy.Row
	if len(o.Tables) == 0 {
		cases := accuracy.ReferenceCases(site)
		if len(cases) == 0 {
			return fmt.Errorf("site %s has no built-in reference benchmarks measured on its GPUs: give TABLE.csv files of times measured there", site.Name)
		}
		rows = accuracy.Compare(site.Name+" workloads", site, cases)
	}
	for _, file := range o.Tables {
		cases, err := readTable(file, site)
		if err != nil {
			return err
		}
		if len(cases) == 0 {
			fmt.Fprintf(w.Err, "migadvisor: %s: left out: no job in it was measured on two profiles or more\n", file)
			continue
		}
		rows = append(rows, accuracy.Compare(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), site, cases)...)
	}
	if len(rows) == 0 {
		return errors.New("no table has a job measured on two profiles or more: the model is scored on a profile's time predicted from another's")
	}
	if o.JSON {
		return writeJSON(w.Out, rows)
	}
	if err := accuracy.Print(w.Out, rows); err != nil {
		return err
	}
	fmt.Fprintln(w.Out)
	for _, r := range rows {
		if r.Protocol == accuracy.Overall {
			fmt.Fprintln(w.Out, accuracyVerdict(r))
		}
	}
	return nil
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

// readTable reads one table's cases (accuracy.ReadCases).
func readTable(file string, site *catalog.Site) ([]accuracy.Case, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return accuracy.ReadCases(file, f, site)
}

// accuracyVerdict says whether migadvisor beat the naive model on a set's
// row of all protocols.
func accuracyVerdict(r accuracy.Row) string {
	verb := "beats"
	switch m, n := fmt.Sprintf("%.1f", r.Model.MAPE), fmt.Sprintf("%.1f", r.Naive.MAPE); {
	case m == n:
		verb = "matches"
	case r.Model.MAPE > r.Naive.MAPE:
		verb = "does not beat"
	}
	return fmt.Sprintf("%s: migadvisor %s the naive 1/SM model overall: %.1f%% mean error against %.1f%%, over %d trials",
		r.Set, verb, r.Model.MAPE, r.Naive.MAPE, r.Model.Trials)
}
