package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/store"
	"github.com/migadvisor/migadvisor/slurm"
)

func trackCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "track",
		Usage:     "link jobs submitted some other way to their batch script",
		ArgsUsage: "JOB.sh JOBID...",
		Description: `Records that the jobs ran JOB.sh (by its fingerprint, which ignores
migadvisor's own rewrites), so their evidence counts for that script. Their
profile comes from accounting when they are collected. Tracking a job again
moves it to the new script or workload.

Examples:
   migadvisor track train.sh 4242 4243
   migadvisor track --workload pytorch_mnist_simplecnn mnist.sh 5001
   migadvisor track train.sh $(sbatch --parsable train.sh)`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "workload", Usage: "tag the jobs with a workload name (for reports)"},
			clusterFlag(),
			slurmBinFlag(),
			jsonFlag(),
		},
		Action: runTrack,
	})
}

func runTrack(c *cli.Context) error {
	if c.NArg() < 2 {
		return usageError{"track needs JOB.sh and at least one JOBID"}
	}
	path := c.Args().First()
	ids := c.Args().Tail()
	for _, id := range ids {
		if _, err := slurm.ParseParsable(id); err != nil || strings.Contains(id, ";") {
			return usageError{fmt.Sprintf("track: %q is not a job id (use the number sbatch printed; for an array, its first part)", id)}
		}
	}
	script, err := slurm.ReadScript(path)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	cluster, err := resolveCluster(c)
	if err != nil {
		return err
	}
	fp := script.Fingerprint()
	now := time.Now()
	subs := make([]store.Submission, 0, len(ids))
	client := slurmClient(c)
	for _, id := range ids {
		sub := store.Submission{Cluster: cluster, JobID: id, Fingerprint: fp, Source: abs, Script: abs,
			Workload: c.String("workload"), Submitted: now}
		// Where its output goes, while slurmctld still knows the job (best effort).
		if kv, err := client.ShowJob(c.Context, id); err == nil {
			sub.Stdout, sub.Stderr, sub.WorkDir = kv["StdOut"], kv["StdErr"], kv["WorkDir"]
		}
		subs = append(subs, sub)
	}
	if err := recordSubmissions(c, subs); err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"script": abs, "fingerprint": fp, "cluster": cluster, "job_ids": ids})
	}
	if isTTY(c.App.Writer) {
		fmt.Fprintf(c.App.Writer, "tracking %s as %s (fingerprint %s); 'migadvisor collect' gathers their evidence\n",
			plural(len(ids), "job"), filepath.Base(path), fp)
	}
	return nil
}
