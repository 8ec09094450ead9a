package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/collect"
	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

func trackCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "track",
		Usage:     "link jobs submitted some other way to their batch script",
		ArgsUsage: "JOB.sh JOBID...",
		Description: `Records that the jobs ran JOB.sh (by its fingerprint, which ignores
migadvisor's own rewrites), so their evidence counts for that script. Their
profile comes from accounting when they are collected; jobs the history
already holds (a dump collected first) have their output read now, through
the script's --output. Tracking a job again moves it to the new script or
workload.

The cluster is --cluster (MIGADVISOR_CLUSTER), else slurmctld's ClusterName,
else the name the history last used, else "local": the name collect gives a
dump without a Cluster column. A job the history holds under exactly one
other cluster name (or under several, as the same job: its submit time) is
linked to it. Jobs that may not count as meant are said on stderr: those
not in the history (run 'migadvisor collect' after they end), those Slurm
has no job of (neither sacct nor squeue knows the id: mistyped?), and those
it holds under several cluster names as different jobs (name one with
--cluster).

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

func trackOptionsFrom(c *cli.Context) (trackOptions, error) {
	if c.NArg() < 2 {
		return trackOptions{}, usageError{"track needs JOB.sh and at least one JOBID"}
	}
	o := trackOptions{Global: globalFlagsFrom(c), Slurm: slurmFlags{Bin: c.String("slurm-bin"), Cluster: c.String("cluster")},
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
	abs, err := filepath.Abs(o.Script)
	if err != nil {
		return err
	}
	st, err := history.Open(ctx, o.Global.DB)
	if err != nil {
		return err
	}
	defer st.Close()
	choice, err := chooseCluster(ctx, o.Slurm, st, w.Err)
	if err != nil {
		return err
	}
	client := o.Slurm.client()
	fp := script.Fingerprint()
	subs := trackSubmissions(ctx, client, o, history.Submission{Cluster: choice.Name, Fingerprint: fp, Source: abs, Script: abs,
		Workload: o.Workload, Submitted: time.Now()})
	if err := st.RecordSubmissions(ctx, subs); err != nil {
		return err
	}
	// A job collected under another cluster name (a dump imported where
	// Slurm could not be asked) is linked where it is, and filed once.
	col := &collect.Collector{Store: st, Fallbacks: choice.Fallbacks()}
	if _, err := col.FileTogether(ctx); err != nil {
		return err
	}
	missing, ambiguous, linked, err := trackedNotInHistory(ctx, st, o.JobIDs)
	if err != nil {
		return err
	}
	// Jobs the history already holds (a dump collected first) get their
	// output read now, through the script's --output: without it their
	// work, metrics and GPU OOMs would wait for another collect.
	if len(linked) > 0 {
		if _, err := col.ScanOutputs(ctx, nil, linked); err != nil {
			fmt.Fprintf(w.Err, "migadvisor: the jobs are tracked, but their output was not read: %v; 'migadvisor collect' reads it\n", err)
		}
	}
	// An id Slurm has no job of will never be in the history: say so now.
	unknown, err := collect.SlurmLacks(ctx, client, missing)
	if err != nil {
		unknown = nil // sacct cannot be asked here: they are only not collected yet
	}
	missing = slices.DeleteFunc(missing, func(id string) bool { return slices.Contains(unknown, id) })
	warnNotInHistory(w.Err, missing, ambiguous)
	if len(unknown) > 0 {
		fmt.Fprintf(w.Err, "migadvisor: %s\n", bench.NoSuchJob(unknown))
	}
	if o.JSON {
		rep := trackReport{Script: abs, Fingerprint: fp, Cluster: choice.Name, JobIDs: o.JobIDs, NotInHistory: missing,
			UnknownToSlurm: append([]string{}, unknown...)}
		for id, a := range ambiguous {
			if rep.Ambiguous == nil {
				rep.Ambiguous = map[string][]string{}
			}
			rep.Ambiguous[id] = a.Clusters
		}
		return writeJSON(w.Out, rep)
	}
	if isTTY(w.Out) {
		fmt.Fprintf(w.Out, "tracking %s as %s (fingerprint %s); 'migadvisor collect' gathers their evidence\n",
			plural(len(o.JobIDs), "job"), filepath.Base(o.Script), fp)
	}
	return nil
}

// trackSubmissions are the submissions of the tracked ids, like base, each
// with where its output goes and when it was submitted while slurmctld still
// knows the job (best effort: else base's time, the time it was tracked).
func trackSubmissions(ctx context.Context, client *slurm.Client, o trackOptions, base history.Submission) []history.Submission {
	subs := make([]history.Submission, 0, len(o.JobIDs))
	for _, id := range o.JobIDs {
		sub := base
		sub.JobID = id
		if kv, err := client.ShowJob(ctx, id); err == nil {
			sub.Stdout, sub.Stderr, sub.WorkDir = kv["StdOut"], kv["StdErr"], kv["WorkDir"]
			if at, err := time.ParseInLocation("2006-01-02T15:04:05", kv["SubmitTime"], time.Local); err == nil {
				sub.Submitted = at
			}
		}
		subs = append(subs, sub)
	}
	return subs
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

// ambiguousJob is a tracked id the history holds under several cluster
// names as different jobs.
type ambiguousJob struct {
	Clusters []string
	LinkedTo string // the cluster whose job it counts as; "" if none
}

// trackedNotInHistory lists the tracked jobs the history has no record of
// (collect has not read them yet), those it holds under several clusters as
// different jobs (which is meant is not known), and the cluster and key of
// each job it holds.
func trackedNotInHistory(ctx context.Context, st *history.Store, ids []string) ([]string, map[string]ambiguousJob, [][2]string, error) {
	tracked, err := st.Tracked(ctx, history.TrackedFilter{JobIDs: ids})
	if err != nil {
		return nil, nil, nil, err
	}
	linked := map[string]string{}
	var keys [][2]string
	for _, t := range tracked {
		if len(t.Jobs) > 0 {
			linked[t.JobID] = t.Cluster
		}
		for _, j := range t.Jobs {
			keys = append(keys, [2]string{t.Cluster, j.Key})
		}
	}
	missing := []string{}
	var ambiguous map[string]ambiguousJob
	for _, id := range ids {
		where, err := st.ClustersOfJob(ctx, id)
		if err != nil {
			return nil, nil, nil, err
		}
		switch {
		case len(where.Names) > 1 && !where.Same:
			if ambiguous == nil {
				ambiguous = map[string]ambiguousJob{}
			}
			ambiguous[id] = ambiguousJob{Clusters: where.Names, LinkedTo: linked[id]}
		case linked[id] == "":
			missing = append(missing, id)
		}
	}
	return missing, ambiguous, keys, nil
}

// warnNotInHistory says on stderr why tracked jobs do not count yet, or
// may count as the wrong job: a recommendation made now would not see them.
func warnNotInHistory(stderr io.Writer, missing []string, ambiguous map[string]ambiguousJob) {
	switch len(missing) {
	case 0:
	case 1:
		fmt.Fprintf(stderr, "migadvisor: job %s is not in the history yet: run 'migadvisor collect' after it ends\n", missing[0])
	default:
		fmt.Fprintf(stderr, "migadvisor: jobs %s are not in the history yet: run 'migadvisor collect' after they end\n", strings.Join(missing, ", "))
	}
	ids := make([]string, 0, len(ambiguous))
	for id := range ambiguous {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
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
