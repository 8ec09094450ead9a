package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/lint"
	"github.com/migadvisor/migadvisor/slurm"
)

type lintReport struct {
	File     string         `json:"file"`
	Site     string         `json:"site"`
	Findings []lint.Finding `json:"findings"`
}

func lintCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "lint",
		Usage:     "check a batch script against sbatch's rules and the site's",
		ArgsUsage: "JOB.sh",
		Description: `Reads JOB.sh exactly as sbatch does and reports what sbatch would reject or
ignore, and what the site does not allow: several MIG slices in one job, an
unknown GPU type, a time limit or memory request over the site's limits, a
launcher that starts more GPU processes than the job asks for GPUs (torchrun
--nproc_per_node=4 with --gres=gpu:a100:1), #SBATCH lines after the first
command, DOS line breaks, an --output or --error directory that does not
exist (checked in the current directory, where sbatch would run, or the
script's --chdir: Slurm does not create it, and the job fails at once with
exit code 0:53 and no output), and more.

Findings print as FILE:LINE: SEVERITY: CODE: MESSAGE. The exit status is 1
when any finding is an error, else 0.

Examples:
   migadvisor lint job.sh
   migadvisor lint --json job.sh | jq '.findings[] | select(.severity=="error")'
   migadvisor --site examples/sites/h100.toml lint job.sh`,
		Flags:  []cli.Flag{jsonFlag()},
		Action: bindAction(lintOptionsFrom, runLint),
	})
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
	if err := printFindings(w.Out, o.JSON, lintReport{File: o.Script, Site: site.Name, Findings: findings}); err != nil {
		return err
	}
	if lint.HasErrors(findings) {
		return silentExit(exitFailure)
	}
	return nil
}

func printFindings(w io.Writer, asJSON bool, r lintReport) error {
	if asJSON {
		return writeJSON(w, r)
	}
	for _, f := range r.Findings {
		fmt.Fprintf(w, "%s:%d: %s: %s: %s\n", r.File, f.Line, f.Severity, f.Code, f.Message)
	}
	if len(r.Findings) == 0 && isTTY(w) {
		fmt.Fprintf(w, "%s: no findings (site %s)\n", r.File, r.Site)
	}
	return nil
}
