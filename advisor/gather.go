package advisor

import (
	"context"
	"time"

	"github.com/migadvisor/migadvisor/advisor/store"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// queueWaitJobs is how many of the newest jobs per profile the queue-wait
// median reads: enough to be stable, few enough to stay fast on a whole
// cluster's history.
const queueWaitJobs = 1000

// Gather reads a script's evidence from the history: the runs that share its
// fingerprint, and the median queue wait per profile since a time.
func Gather(ctx context.Context, st *store.Store, site *catalog.Site, path string, s *slurm.Script, waitsSince time.Time) (Job, error) {
	job := Job{Script: path, Fingerprint: s.Fingerprint(), Resources: s.Resources, QueueWaitS: map[string]float64{}}
	recs, err := st.History(ctx, store.HistoryFilter{Fingerprint: job.Fingerprint})
	if err != nil {
		return job, err
	}
	for i := range recs {
		if r, ok := RunFromRecord(&recs[i]); ok {
			job.Runs = append(job.Runs, r)
		}
	}
	for _, p := range site.Profiles {
		w, err := st.QueueWait(ctx, append([]string{p.GRESType}, p.GRESTypes...), waitsSince, queueWaitJobs)
		if err != nil {
			return job, err
		}
		if w.Jobs > 0 {
			job.QueueWaitS[p.Name] = w.MedianS
		}
	}
	return job, nil
}
