package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/internal/cliargs"
)

// slurmBinFlag picks the Slurm commands, for sites (and tests) where they are
// not on PATH. Flags are made anew for each command: urfave/cli stores what it
// reads from the environment in the flag itself.
func slurmBinFlag() cli.Flag {
	return &cli.StringFlag{Name: "slurm-bin", EnvVars: []string{"MIGADVISOR_SLURM_BIN"},
		Usage: "directory holding sbatch, squeue, sacct, scancel and scontrol (default: PATH)"}
}

func clusterFlag() cli.Flag {
	return &cli.StringFlag{Name: "cluster", EnvVars: []string{"MIGADVISOR_CLUSTER"},
		Usage: "cluster name for jobs whose records do not carry one (default: slurmctld's ClusterName, else the name the history last used, else local)"}
}

// parseSince reads --since (cliargs.ParseSince); a value it cannot read is
// a usage error.
func parseSince(v string, now time.Time) (time.Time, error) {
	t, err := cliargs.ParseSince(v, now)
	if err != nil {
		return t, usageError{fmt.Sprintf("--since %q: %v", v, err)}
	}
	return t, nil
}

// splitList reads a comma-separated flag value.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
