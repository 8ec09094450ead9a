package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/lint"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

type suReport struct {
	Site    string `json:"site"`
	Profile string `json:"profile,omitempty"`
	GPUs    int    `json:"gpus"`
	catalog.Charge
	// AtMost: the hours are the script's --time, so SU is the most the job
	// can be charged.
	AtMost bool `json:"at_most"`
	// Warnings: #SBATCH lines sbatch ignores, limits the request is over.
	Warnings []lint.Finding `json:"warnings"`
}

func suCommand() *cli.Command {
	return &cli.Command{
		Name:        "su",
		Usage:       "what a job is charged in service units",
		ArgsUsage:   "[JOB.sh]",
		Description: helpText("su"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "profile", Usage: "GPU profile, or its GRES type (see 'migadvisor catalog'); none for a CPU-only job"},
			&cli.IntFlag{Name: "gpus", Value: 1, DefaultText: "1, or the script's", Usage: "how many of the profile"},
			&cli.IntFlag{Name: "cpus", Value: 1, DefaultText: "1, or the script's", Usage: "CPUs"},
			&cli.StringFlag{Name: "mem", Usage: "memory for the job, Slurm style (4G, 4000M); default: the script's --mem, else its --mem-per-cpu or the site's memory per CPU, × the CPUs"},
			&cli.Float64Flag{Name: "hours", DefaultText: "1, or the script's --time", Usage: "run time in hours"},
			&cli.StringFlag{Name: "time", Usage: "run time in Slurm format (MM, HH:MM:SS, D-HH:MM...)"},
			&cli.StringFlag{Name: "qos", DefaultText: "the script's", Usage: "QoS (some are not charged)"},
			&cli.StringFlag{Name: "partition", DefaultText: "the script's, else the profile's first, else the site's default", Usage: "partition"},
			&cli.BoolFlag{Name: "exclusive", DefaultText: "the script's, else false", Usage: "the job has whole nodes (billed for all their CPUs)"},
			jsonFlag(),
		},
		Action: bindAction(suOptionsFrom, runSU),
	}
}

// suOptions are su's flags: the script, if any, and the figures that
// replace what it asks for.
type suOptions struct {
	Global globalFlags
	Script string // "" for none: the flags alone
	Over   catalog.Overrides
	JSON   bool
}

func suOptionsFrom(c *cli.Context) (suOptions, error) {
	if c.NArg() > 1 {
		return suOptions{}, usageError{"su takes at most one JOB.sh"}
	}
	if c.IsSet("hours") && c.IsSet("time") {
		return suOptions{}, usageError{"give --hours or --time, not both"}
	}
	o := suOptions{Global: globalFlagsFrom(c), Script: c.Args().First(), JSON: c.Bool("json")}
	if v := c.String("profile"); v != "" {
		o.Over.Profile = &v
	}
	o.Over.GPUs, o.Over.CPUs = ifSet(c, "gpus", c.Int), ifSet(c, "cpus", c.Int)
	if c.IsSet("mem") {
		mib, err := slurm.ParseMemoryMiB(c.String("mem"))
		if err != nil {
			return suOptions{}, usageError{"--mem: " + err.Error()}
		}
		f := float64(mib)
		o.Over.MemMiB = &f
	}
	hours, err := suHours(c)
	if err != nil {
		return suOptions{}, err
	}
	o.Over.Hours = hours
	o.Over.QoS, o.Over.Partition = ifSet(c, "qos", c.String), ifSet(c, "partition", c.String)
	o.Over.Exclusive = ifSet(c, "exclusive", c.Bool)
	return o, nil
}

// ifSet is the value of the flag name where it was given, nil where not.
func ifSet[T any](c *cli.Context, name string, value func(string) T) *T {
	if !c.IsSet(name) {
		return nil
	}
	v := value(name)
	return &v
}

// suHours is --hours or --time in hours; nil without either.
func suHours(c *cli.Context) (*float64, error) {
	switch {
	case c.IsSet("hours"):
		h := c.Float64("hours")
		if h < 0 || math.IsNaN(h) || math.IsInf(h, 0) {
			return nil, usageError{fmt.Sprintf("--hours is a run time, a finite number ≥ 0, not %g", h)}
		}
		return &h, nil
	case c.IsSet("time"):
		t, err := slurm.ParseTimeLimit(c.String("time"))
		if err != nil || t.Unlimited {
			return nil, usageError{fmt.Sprintf("--time %q is not a finite Slurm time", c.String("time"))}
		}
		h := t.Hours()
		return &h, nil
	}
	return nil, nil
}

// runSU prices the request (advisor.Price) and prints the quote.
func runSU(_ context.Context, o suOptions, w outWriters) error {
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	var script *slurm.Script
	switch {
	case o.Script != "":
		if script, err = slurm.ReadScript(o.Script); err != nil {
			return err
		}
	case o.Over.Profile == nil:
		return usageError{"su needs --profile (or a JOB.sh); profiles: " + strings.Join(site.ProfileNames(), ", ")}
	}
	q, err := advisor.Price(site, script, o.Over)
	var unknown *catalog.UnknownProfileError
	switch {
	case errors.Is(err, advisor.ErrNoUnits):
		return usageError{err.Error()}
	case errors.As(err, &unknown):
		return usageError{"--profile: " + err.Error()}
	}
	if err != nil {
		return err
	}
	r := suReport{Site: site.Name, GPUs: q.Job.GPUs, Charge: q.Charge, Warnings: q.Warnings, AtMost: q.AtMost}
	if q.Job.Profile != nil {
		r.Profile = q.Job.Profile.Name
	} else {
		r.GPUs = 0
	}
	if o.JSON {
		return writeJSON(w.Out, r)
	}
	fmt.Fprintln(w.Out, r.Charge.Describe(r.Site, r.Profile, r.GPUs, r.AtMost))
	for _, f := range r.Warnings {
		fmt.Fprintln(w.Err, f.Where(o.Script))
	}
	return nil
}
