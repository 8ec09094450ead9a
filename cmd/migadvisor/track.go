package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
)

func trackCommand() *cli.Command {
	return &cli.Command{
		Name:        "track",
		Usage:       "link jobs submitted some other way to their batch script",
		ArgsUsage:   "JOB.sh JOBID...",
		Description: helpText("track"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "workload", Usage: "tag the jobs with a workload name (for reports)"},
			clusterFlag(),
			slurmBinFlag(),
			jsonFlag(),
		},
		Action: bindAction(trackOptionsFrom, runTrack),
	}
}

// trackOptions are track's arguments and flags.
type trackOptions struct {
	Global   globalFlags
	Slurm    slurmFlags
	Script   string
	JobIDs   []string
	Workload string
	JSON     bool
}

// addsRuns: track links jobs to a script.
func (o trackOptions) addsRuns() bool { return true }

func trackOptionsFrom(c *cli.Context) (trackOptions, error) {
	if c.NArg() < 2 {
		return trackOptions{}, usageError{"track needs JOB.sh and at least one JOBID"}
	}
	o := trackOptions{Global: globalFlagsFrom(c), Slurm: slurmFlagsFrom(c),
		Script: c.Args().First(), JobIDs: c.Args().Tail(), Workload: c.String("workload"), JSON: c.Bool("json")}
	if err := collect.CheckJobIDs(o.JobIDs); err != nil {
		return trackOptions{}, usageError{"track: " + err.Error()}
	}
	return o, nil
}

func runTrack(ctx context.Context, o trackOptions, w outWriters) error {
	env := newEnv(o.Global, o.Slurm, w)
	res, err := collect.TrackScript(ctx, o.Global.DB, o.Script, o.Slurm.client(), collect.TrackRequest{
		JobIDs: o.JobIDs, Workload: o.Workload, Cluster: o.Slurm.Cluster, OnFallback: env.say})
	if err != nil {
		return err
	}
	for _, warning := range res.Warnings() {
		env.say(warning)
	}
	if o.JSON {
		return writeJSON(w.Out, res.Report())
	}
	if isTTY(w.Out) {
		fmt.Fprintln(w.Out, res.Confirmation())
	}
	return nil
}
