package collect

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
)

// TrackRequest names jobs submitted some other way and the script they ran.
type TrackRequest struct {
	Script   *slurm.Script // read from Script.Path (TrackScript reads it)
	JobIDs   []string      // the ids sbatch printed
	Workload string        // a workload to tag them with (for reports); "" for none
	// Cluster is the name the user gave (--cluster); "" asks slurmctld
	// (ChooseCluster).
	Cluster string
	// Now is when they are tracked: the submit time of a job slurmctld no
	// longer shows. time.Now when nil.
	Now func() time.Time
	// OnFallback, when set, hears the sentence that says which cluster name
	// was used when neither the user nor Slurm gave one.
	OnFallback func(sentence string)
}

// TrackResult is what Track linked, and what may not count as meant.
type TrackResult struct {
	Script      string // the script's absolute path
	Fingerprint string
	Cluster     string
	JobIDs      []string // the ids tracked, as given
	// NotInHistory are the jobs collect has not read yet (Slurm knows them).
	NotInHistory []string
	// UnknownToSlurm are the ids neither sacct nor squeue knows (mistyped?).
	UnknownToSlurm []string
	// Ambiguous are the ids the history holds under several cluster names
	// as different jobs: which one ran the script is not known.
	Ambiguous map[string]AmbiguousJob
	// OutputUnread is why the output of the jobs the history already holds
	// could not be read (the jobs are tracked all the same; collect reads it).
	OutputUnread error
	// SetAside are the sbatch wrapper's records the history's open could
	// not read from its spool (history.SetAside).
	SetAside []history.SetAside
}

// AmbiguousJob is a tracked id the history holds under several cluster
// names as different jobs.
type AmbiguousJob struct {
	Clusters []string
	LinkedTo string // the cluster whose job it counts as; "" if none
}

// CheckJobIDs refuses an id that is not a job id as sbatch prints it (for
// an array, its first part): Track would record it all the same.
func CheckJobIDs(ids []string) error {
	for _, id := range ids {
		if _, err := slurm.ParseParsable(id); err != nil || strings.Contains(id, ";") {
			return fmt.Errorf("%q is not a job id (use the number sbatch printed; for an array, its first part)", id)
		}
	}
	return nil
}

// TrackScript reads the script at path, then tracks the jobs (Track) in
// the history at db, created if need be and closed after, asking Slurm
// through sl: a script that cannot be read leaves the history as it was.
func TrackScript(ctx context.Context, db, path string, sl *slurm.Client, req TrackRequest) (TrackResult, error) {
	script, err := slurm.ReadScript(path)
	if err != nil {
		return TrackResult{}, err
	}
	st, err := history.Open(ctx, db)
	if err != nil {
		return TrackResult{}, err
	}
	defer st.Close()
	req.Script = script
	res, err := Track(ctx, &Collector{Store: st, Slurm: sl}, req)
	res.SetAside = st.SetAside()
	return res, err
}

// Track records that the jobs ran the script (by its fingerprint, which
// ignores migadvisor's own rewrites), so that their evidence counts for it;
// tracking a job again moves it to the new script or workload. A job the
// history holds under one other cluster name (a dump imported where Slurm
// could not be asked) is linked where it is, and jobs the history already
// holds have their output read now. col's Slurm is asked where the jobs'
// output goes and which ids it knows; its Cluster and Fallbacks are set
// (NameCluster).
func Track(ctx context.Context, col *Collector, req TrackRequest) (TrackResult, error) {
	abs, err := filepath.Abs(req.Script.Path)
	if err != nil {
		return TrackResult{}, fmt.Errorf("track %s: %w", req.Script.Path, err)
	}
	if err := col.NameCluster(ctx, req.Cluster, req.OnFallback); err != nil {
		return TrackResult{}, err
	}
	res := TrackResult{Script: abs, Fingerprint: req.Script.Fingerprint(), Cluster: col.Cluster, JobIDs: req.JobIDs}
	now := req.Now
	if now == nil {
		now = time.Now
	}
	subs := col.trackSubmissions(ctx, req.JobIDs, history.Submission{Cluster: col.Cluster, Fingerprint: res.Fingerprint,
		Source: abs, Script: abs, Workload: req.Workload, Submitted: now()})
	if err := col.Store.RecordSubmissions(ctx, subs); err != nil {
		return res, err
	}
	// Filed under another name than their jobs' (Slurm could not be asked
	// for the cluster's), they go to their jobs' in place of the earlier
	// records there: FileTogether would keep those where they were
	// recorded at the same time, and the jobs would count for both scripts
	// or workloads.
	if _, err := col.Store.MoveSubmissions(ctx, col.Cluster, req.JobIDs); err != nil {
		return res, err
	}
	// A job collected under another cluster name (a dump imported where
	// Slurm could not be asked) is linked where it is, and filed once.
	if _, err := col.FileTogether(ctx); err != nil {
		return res, err
	}
	missing, ambiguous, linked, err := trackedNotInHistory(ctx, col.Store, req.JobIDs)
	if err != nil {
		return res, err
	}
	res.Ambiguous = ambiguous
	// Jobs the history already holds (a dump collected first) get their
	// output read now, through the script's --output: without it their
	// work, metrics and GPU OOMs would wait for another collect.
	if len(linked) > 0 {
		if _, err := col.ScanOutputs(ctx, nil, linked); err != nil {
			res.OutputUnread = err
		}
	}
	// An id Slurm has no job of will never be in the history: it is said
	// now, apart from those only not collected yet.
	res.UnknownToSlurm = col.slurmLacks(ctx, missing)
	res.NotInHistory = slices.DeleteFunc(missing, func(id string) bool { return slices.Contains(res.UnknownToSlurm, id) })
	return res, nil
}

// slurmLacks is SlurmLacks, or none where sacct cannot be asked: the jobs
// are then only not collected yet.
func (c *Collector) slurmLacks(ctx context.Context, ids []string) []string {
	if c.Slurm == nil {
		return nil
	}
	unknown, err := SlurmLacks(ctx, c.Slurm, ids)
	if err != nil {
		return nil
	}
	return unknown
}

// trackSubmissions are the submissions of the tracked ids, like base, each
// with where its output goes and when it was submitted while slurmctld still
// knows the job (best effort: else base's time, the time it was tracked).
func (c *Collector) trackSubmissions(ctx context.Context, ids []string, base history.Submission) []history.Submission {
	subs := make([]history.Submission, 0, len(ids))
	for _, id := range ids {
		sub := base
		sub.JobID = id
		if c.Slurm != nil {
			if job, err := c.Slurm.DescribeJob(ctx, id); err == nil {
				sub.Stdout, sub.Stderr, sub.WorkDir = job.Stdout, job.Stderr, job.WorkDir
				if !job.Submitted.IsZero() {
					sub.Submitted = job.Submitted
				}
			}
		}
		subs = append(subs, sub)
	}
	return subs
}

// trackedNotInHistory lists the tracked jobs the history has no record of
// (collect has not read them yet), those it holds under several clusters as
// different jobs (which is meant is not known), and the cluster and key of
// each job it holds.
func trackedNotInHistory(ctx context.Context, st *history.Store, ids []string) ([]string, map[string]AmbiguousJob, [][2]string, error) {
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
	var ambiguous map[string]AmbiguousJob
	for _, id := range ids {
		where, err := st.ClustersOfJob(ctx, id)
		if err != nil {
			return nil, nil, nil, err
		}
		switch {
		case len(where.Names) > 1 && !where.Same:
			if ambiguous == nil {
				ambiguous = map[string]AmbiguousJob{}
			}
			ambiguous[id] = AmbiguousJob{Clusters: where.Names, LinkedTo: linked[id]}
		case linked[id] == "":
			missing = append(missing, id)
		}
	}
	return missing, ambiguous, keys, nil
}
