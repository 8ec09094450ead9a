package main

import (
	"context"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/base/lint"
	"github.com/migadvisor/migadvisor/slurm"
)

func lintCommand() *cli.Command {
	return &cli.Command{
		Name:        "lint",
		Usage:       "check a batch script against sbatch's rules and the site's",
		ArgsUsage:   "JOB.sh",
		Description: helpText("lint"),
		Flags:       []cli.Flag{jsonFlag()},
		Action:      bindAction(lintOptionsFrom, runLint),
	}
}

// lintOptions are lint's argument and flags.
type lintOptions struct {
	Global    globalFlags
	Script    string
	SubmitDir string // where sbatch would run: the job's --output and --error directories must exist
	JSON      bool
}

func lintOptionsFrom(c *cli.Context) (lintOptions, error) {
	path, err := oneArg(c, "JOB.sh")
	if err != nil {
		return lintOptions{}, err
	}
	dir, _ := os.Getwd()
	return lintOptions{Global: globalFlagsFrom(c), Script: path, SubmitDir: dir, JSON: c.Bool("json")}, nil
}

func runLint(_ context.Context, o lintOptions, w outWriters) error {
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	script, err := slurm.ReadScript(o.Script)
	if err != nil {
		return err
	}
	findings := lint.CheckWith(script, site, lint.Options{SubmitDir: o.SubmitDir})
	if findings == nil {
		findings = []lint.Finding{}
	}
	report := lint.Report{File: o.Script, Site: site.Name, Findings: findings}
	if o.JSON {
		err = writeJSON(w.Out, report)
	} else {
		err = report.WriteText(w.Out, isTTY(w.Out))
	}
	if err != nil {
		return err
	}
	if lint.HasErrors(findings) {
		return silentExit(exitFailure)
	}
	return nil
}
