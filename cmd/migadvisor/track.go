package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/collect"
	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

func trackCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
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
	})
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
	for _, id := range o.JobIDs {
		if _, err := slurm.ParseParsable(id); err != nil || strings.Contains(id, ";") {
			return trackOptions{}, usageError{fmt.Sprintf("track: %q is not a job id (use the number sbatch printed; for an array, its first part)", id)}
		}
	}
	return o, nil
}

func runTrack(ctx context.Context, o trackOptions, w outWriters) error {
	script, err := slurm.ReadScript(o.Script)
	if err != nil {
		return err
	}
	st, err := history.Open(ctx, o.Global.DB)
	if err != nil {
		return err
	}
	defer st.Close()
	res, err := collect.Track(ctx, &collect.Collector{Store: st, Slurm: o.Slurm.client()}, collect.TrackRequest{
		Script: script, JobIDs: o.JobIDs, Workload: o.Workload, Cluster: o.Slurm.Cluster,
		OnFallback: func(sentence string) { fmt.Fprintf(w.Err, "migadvisor: %s\n", sentence) }})
	if err != nil {
		return err
	}
	warnTrack(w.Err, res)
	if o.JSON {
		return writeJSON(w.Out, trackReportOf(res, o.JobIDs))
	}
	if isTTY(w.Out) {
		fmt.Fprintf(w.Out, "tracking %s as %s (fingerprint %s); 'migadvisor collect' gathers their evidence\n",
			textutil.Plural(len(o.JobIDs), "job"), filepath.Base(o.Script), res.Fingerprint)
	}
	return nil
}

// warnTrack says on stderr what may keep tracked jobs from counting as meant.
func warnTrack(stderr io.Writer, res collect.TrackResult) {
	if res.OutputUnread != nil {
		fmt.Fprintf(stderr, "migadvisor: the jobs are tracked, but their output was not read: %v; 'migadvisor collect' reads it\n", res.OutputUnread)
	}
	warnNotInHistory(stderr, res.NotInHistory, res.Ambiguous)
	if len(res.UnknownToSlurm) > 0 {
		fmt.Fprintf(stderr, "migadvisor: %s\n", bench.NoSuchJob(res.UnknownToSlurm))
	}
}

// trackReportOf is track's --json output of res.
func trackReportOf(res collect.TrackResult, ids []string) trackReport {
	rep := trackReport{Script: res.Script, Fingerprint: res.Fingerprint, Cluster: res.Cluster, JobIDs: ids,
		NotInHistory: nonNil(res.NotInHistory), UnknownToSlurm: nonNil(res.UnknownToSlurm)}
	for id, a := range res.Ambiguous {
		if rep.Ambiguous == nil {
			rep.Ambiguous = map[string][]string{}
		}
		rep.Ambiguous[id] = a.Clusters
	}
	return rep
}

// trackReport is track's --json output.
type trackReport struct {
	Script         string              `json:"script"`
	Fingerprint    string              `json:"fingerprint"`
	Cluster        string              `json:"cluster"`
	JobIDs         []string            `json:"job_ids"`
	NotInHistory   []string            `json:"not_in_history"`      // no accounting record yet
	UnknownToSlurm []string            `json:"unknown_to_slurm"`    // neither sacct nor squeue knows them
	Ambiguous      map[string][]string `json:"ambiguous,omitempty"` // job id -> the clusters that hold it as different jobs
}

// warnNotInHistory says on stderr why tracked jobs do not count yet, or
// may count as the wrong job: a recommendation made now would not see them.
func warnNotInHistory(stderr io.Writer, missing []string, ambiguous map[string]collect.AmbiguousJob) {
	switch len(missing) {
	case 0:
	case 1:
		fmt.Fprintf(stderr, "migadvisor: job %s is not in the history yet: run 'migadvisor collect' after it ends\n", missing[0])
	default:
		fmt.Fprintf(stderr, "migadvisor: jobs %s are not in the history yet: run 'migadvisor collect' after they end\n", strings.Join(missing, ", "))
	}
	for _, id := range slices.Sorted(maps.Keys(ambiguous)) {
		a := ambiguous[id]
		what := "track it again with --cluster and the one it ran on"
		if a.LinkedTo != "" {
			what = fmt.Sprintf("it counts as %s's; if it ran on the other, track it again with --cluster and its name", a.LinkedTo)
			if len(a.Clusters) > 2 {
				what = fmt.Sprintf("it counts as %s's; if it ran on another, track it again with --cluster and its name", a.LinkedTo)
			}
		}
		fmt.Fprintf(stderr, "migadvisor: job %s is in the history under clusters %s, as different jobs: %s\n", id, textutil.JoinAnd(a.Clusters), what)
	}
}
