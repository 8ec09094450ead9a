package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/collect"
	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/slurm"
)

// slurmBinFlag picks the Slurm commands, for sites (and tests) where they are
// not on PATH. Flags are made anew for each command: urfave/cli stores what it
// reads from the environment in the flag itself.
func slurmBinFlag() cli.Flag {
	return &cli.StringFlag{Name: "slurm-bin", EnvVars: []string{"MIGADVISOR_SLURM_BIN"},
		Usage: "directory holding sbatch, squeue, sacct, scancel and scontrol (default: PATH)"}
}

func slurmClient(c *cli.Context) *slurm.Client {
	return &slurm.Client{Bin: c.String("slurm-bin")}
}

// openHistory opens the history database named by --db / MIGADVISOR_DB
// for a command that only reads it (openHistoryToRead).
func openHistory(c *cli.Context) (*history.Store, error) {
	return openHistoryToRead(c.Context, dbPath(c), c.App.ErrWriter)
}

// openHistoryToWrite opens (creating if needed) the history to record in.
func openHistoryToWrite(c *cli.Context) (*history.Store, error) {
	return history.Open(c.Context, dbPath(c))
}

// openCollector wires a collector to the site, the history (which the caller
// closes through col.Store) and Slurm (openCollectorFor).
func openCollector(c *cli.Context) (*collect.Collector, error) {
	return openCollectorFor(c.Context, globalFlagsFrom(c), slurmFlags{Bin: c.String("slurm-bin"), Cluster: c.String("cluster")})
}

func clusterFlag() cli.Flag {
	return &cli.StringFlag{Name: "cluster", EnvVars: []string{"MIGADVISOR_CLUSTER"},
		Usage: "cluster name for jobs whose records do not carry one (default: slurmctld's ClusterName, else the name the history last used, else local)"}
}

// resolveCluster is collect.ChooseCluster given --cluster or
// MIGADVISOR_CLUSTER (for commands without the flag), saying on stderr which
// name it fell back to.
func resolveCluster(c *cli.Context, st *history.Store) (collect.ClusterChoice, error) {
	given := c.String("cluster")
	if given == "" {
		given = os.Getenv("MIGADVISOR_CLUSTER")
	}
	return chooseCluster(c.Context, slurmFlags{Bin: c.String("slurm-bin"), Cluster: given}, st, c.App.ErrWriter)
}

// clusterSubmitter submits through Slurm and names the cluster of the jobs
// sbatch does not name (one cluster) the way every command does.
type clusterSubmitter struct {
	*slurm.Client
	c    *cli.Context
	name string
}

func newClusterSubmitter(c *cli.Context) *clusterSubmitter {
	return &clusterSubmitter{Client: slurmClient(c), c: c}
}

// ClusterName resolves the cluster once, with the history's name to fall back on.
func (s *clusterSubmitter) ClusterName(ctx context.Context) (string, error) {
	if s.name != "" {
		return s.name, nil
	}
	st, err := openHistoryToWrite(s.c)
	if err != nil {
		return "", err
	}
	defer st.Close()
	ch, err := resolveCluster(s.c, st)
	s.name = ch.Name
	return s.name, err
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
