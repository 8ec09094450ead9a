package advisor

import (
	"context"
	"fmt"
	"time"

	"github.com/migadvisor/migadvisor/advisor/store"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// queueWaitJobs is how many of the newest jobs per profile the queue-wait
// median reads: enough to be stable, few enough to stay fast on a whole
// cluster's history.
const queueWaitJobs = 1000

// Gather reads a script's evidence from the user's history and, when the
// site has one, the site-wide history: the runs that share its fingerprint
// (a job in both counts once), and the median queue wait per profile since
// a time, from the site-wide history when there is one (it holds the whole
// cluster's jobs), else the user's.
func Gather(ctx context.Context, st *store.Store, site *catalog.Site, path string, s *slurm.Script, waitsSince time.Time, siteWide ...*store.Store) (Job, error) {
	job := Job{Script: path, Fingerprint: s.Fingerprint(), Resources: s.Resources, QueueWaitS: map[string]float64{}}
	stores := append([]*store.Store{st}, siteWide...)
	var err error
	if job.Runs, err = GatherRuns(ctx, job.Fingerprint, stores...); err != nil {
		return job, err
	}
	waits := stores[len(stores)-1]
	for _, p := range site.Profiles {
		w, err := waits.QueueWait(ctx, append([]string{p.GRESType}, p.GRESTypes...), waitsSince, queueWaitJobs)
		if err != nil {
			return job, err
		}
		if w.Jobs > 0 {
			job.QueueWaitS[p.Name] = w.MedianS
		}
	}
	return job, nil
}

// GatherRuns reads the runs of a script (by fingerprint) from one or more
// histories: the user's own and a site-wide one may both hold a job, which
// counts once.
func GatherRuns(ctx context.Context, fingerprint string, stores ...*store.Store) ([]Run, error) {
	var all [][]Run
	for _, st := range stores {
		recs, err := st.History(ctx, store.HistoryFilter{Fingerprint: fingerprint})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.Path(), err)
		}
		var runs []Run
		for i := range recs {
			if r, ok := RunFromRecord(&recs[i]); ok {
				runs = append(runs, r)
			}
		}
		all = append(all, runs)
	}
	return MergeRuns(all...), nil
}

// MergeRuns joins runs read from several histories, each job once.
func MergeRuns(sets ...[]Run) []Run {
	var runs []Run
	seen := map[string]bool{}
	for _, set := range sets {
		for _, r := range set {
			if key := r.Cluster + "/" + r.JobID; !seen[key] {
				seen[key] = true
				runs = append(runs, r)
			}
		}
	}
	return runs
}
