package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/collect"
	"github.com/migadvisor/migadvisor/advisor/history"
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
	st, err := openHistoryToWrite(c)
	if err != nil {
		return err
	}
	defer st.Close()
	choice, err := resolveCluster(c, st)
	if err != nil {
		return err
	}
	cluster := choice.Name
	fp := script.Fingerprint()
	now := time.Now()
	subs := make([]history.Submission, 0, len(ids))
	client := slurmClient(c)
	for _, id := range ids {
		sub := history.Submission{Cluster: cluster, JobID: id, Fingerprint: fp, Source: abs, Script: abs,
			Workload: c.String("workload"), Submitted: now}
		// Where its output goes, while slurmctld still knows the job (best effort).
		if kv, err := client.ShowJob(c.Context, id); err == nil {
			sub.Stdout, sub.Stderr, sub.WorkDir = kv["StdOut"], kv["StdErr"], kv["WorkDir"]
			// When the job was submitted, not when it was tracked.
			if at, err := time.ParseInLocation("2006-01-02T15:04:05", kv["SubmitTime"], time.Local); err == nil {
				sub.Submitted = at
			}
		}
		subs = append(subs, sub)
	}
	if err := st.RecordSubmissions(c.Context, subs); err != nil {
		return err
	}
	// A job collected under another cluster name (a dump imported where
	// Slurm could not be asked) is linked where it is, and filed once.
	col := &collect.Collector{Store: st, Fallbacks: choice.Fallbacks()}
	if _, err := col.FileTogether(c.Context); err != nil {
		return err
	}
	missing, ambiguous, linked, err := trackedNotInHistory(c, st, ids)
	if err != nil {
		return err
	}
	// Jobs the history already holds (a dump collected first) get their
	// output read now, through the script's --output: without it their
	// work, metrics and GPU OOMs would wait for another collect.
	if len(linked) > 0 {
		if _, err := col.ScanOutputs(c.Context, nil, linked); err != nil {
			fmt.Fprintf(c.App.ErrWriter, "migadvisor: the jobs are tracked, but their output was not read: %v; 'migadvisor collect' reads it\n", err)
		}
	}
	// An id Slurm has no job of will never be in the history: say so now.
	unknown, err := collect.SlurmLacks(c.Context, client, missing)
	if err != nil {
		unknown = nil // sacct cannot be asked here: they are only not collected yet
	}
	missing = slices.DeleteFunc(missing, func(id string) bool { return slices.Contains(unknown, id) })
	warnNotInHistory(c, missing, ambiguous)
	if len(unknown) > 0 {
		fmt.Fprintf(c.App.ErrWriter, "migadvisor: %s\n", slurmHasNo(unknown))
	}
	if c.Bool("json") {
		rep := trackReport{Script: abs, Fingerprint: fp, Cluster: cluster, JobIDs: ids, NotInHistory: missing,
			UnknownToSlurm: append([]string{}, unknown...)}
		for id, a := range ambiguous {
			if rep.Ambiguous == nil {
				rep.Ambiguous = map[string][]string{}
			}
			rep.Ambiguous[id] = a.Clusters
		}
		return writeJSON(c.App.Writer, rep)
	}
	if isTTY(c.App.Writer) {
		fmt.Fprintf(c.App.Writer, "tracking %s as %s (fingerprint %s); 'migadvisor collect' gathers their evidence\n",
			plural(len(ids), "job"), filepath.Base(path), fp)
	}
	return nil
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
func trackedNotInHistory(c *cli.Context, st *history.Store, ids []string) ([]string, map[string]ambiguousJob, [][2]string, error) {
	tracked, err := st.Tracked(c.Context, history.TrackedFilter{JobIDs: ids})
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
		where, err := st.ClustersOfJob(c.Context, id)
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
func warnNotInHistory(c *cli.Context, missing []string, ambiguous map[string]ambiguousJob) {
	switch len(missing) {
	case 0:
	case 1:
		fmt.Fprintf(c.App.ErrWriter, "migadvisor: job %s is not in the history yet: run 'migadvisor collect' after it ends\n", missing[0])
	default:
		fmt.Fprintf(c.App.ErrWriter, "migadvisor: jobs %s are not in the history yet: run 'migadvisor collect' after they end\n", strings.Join(missing, ", "))
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
		fmt.Fprintf(c.App.ErrWriter, "migadvisor: job %s is in the history under clusters %s, as different jobs: %s\n", id, joinAnd(a.Clusters), what)
	}
}

// joinAnd lists words as a sentence does: "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if n := len(words); n > 1 {
		return strings.Join(words[:n-1], ", ") + " and " + words[n-1]
	}
	return strings.Join(words, "")
}
