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
		Name:      "accuracy",
		Usage:     "how well migadvisor predicts runtimes, beside the naive model",
		ArgsUsage: "[TABLE.csv ...]",
		Description: `Scores migadvisor's runtime model on measured times: each job's time on a
profile is hidden and predicted from its others (all but that one known, two
known, one known). MIGADVISOR is the mean absolute percentage error, WORST
the signed error of largest size and IN RANGE the share of measured times
inside the range migadvisor prints, beside the naive model (time ∝ 1 / SMs,
from the measured profile nearest in SMs), the model before (the geometric
mean of the SM and bandwidth shares) and the best explanation chosen in
hindsight (from two profiles or more). A line per set says whether
migadvisor beats the naive model over all three.

Without TABLE.csv, the site's built-in reference benchmarks are scored. Each
TABLE.csv is a set, measured on the site's profiles or, with --gpu, on a GPU
model's MIG profiles and the whole GPU ("full"). A table is long (a job column:
job, case, workload, benchmark or name; a profile column: profile, gpu profile,
mig profile, slice or gpu; a column of times) or wide, as Wulver publishes
them (the profile first, then a job per column of times, or of rates where
there is no time). Times have time, seconds, walltime, runtime or latency in
their header, or a unit: (s), (min), (h). Rates (TFLOPs, throughput, samples/s,
ns/day) are read as 1/rate, the time of a fixed amount of work. Profiles are
named as the site names them (1g.10gb, MIG 1g.10gb), as the whole GPU (full,
no MIG) or by their memory (A100_10gb MIG). OOM, N/A and blank cells were not
measured; a job measured on one profile alone is left out.

   times.csv (long)            gromacs.csv (wide)
   job,profile,walltime (s)    GPU Profile,Walltime (s),SU
   resnet,1g.5gb,1800          A100_10gb MIG,499.131,6
   resnet,3g.20gb,720          A100_80gb full GPU,182.142,20
   resnet,full,450

Examples:
   migadvisor accuracy                                 # the site's reference benchmarks
   migadvisor accuracy gromacs.csv llm.csv             # tables measured at the site
   migadvisor accuracy --gpu A100-40GB times.csv       # measured on A100-40GB MIG slices
   migadvisor accuracy --json --gpu H100-80GB times.csv`,
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
