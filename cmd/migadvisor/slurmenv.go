package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
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

// parseSince reads --since: a date (2026-11-01), a date and time
// (2026-11-01T08:00), or an age (30m, 36h, 7d, 2w).
func parseSince(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			return t, nil
		}
	}
	unit := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if n := len(v); n > 1 {
		if u, ok := unit[v[n-1]]; ok {
			var k int
			if _, err := fmt.Sscanf(v[:n-1], "%d", &k); err == nil && k >= 0 && fmt.Sprint(k) == v[:n-1] {
				return now.Add(-time.Duration(k) * u), nil
			}
		}
	}
	return time.Time{}, usageError{fmt.Sprintf("--since %q: use a date (2026-11-01), a time (2026-11-01T08:00) or an age (30m, 36h, 7d, 2w)", v)}
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
