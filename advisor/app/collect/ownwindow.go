package collect

import (
	"context"
	"slices"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

// continueOwnWindow goes on, after a collect of the tracked jobs, with the
// window of the user's own jobs from its watermark, where a collect by
// time (collect --since) left one: the jobs no submission tracks (an
// salloc or Open OnDemand session, a job plain sbatch submitted) then reach
// the history with every plain collect, as that collect's "the next collect
// starts at" promised. Without a watermark it adds nothing.
func (c *Collector) continueOwnWindow(ctx context.Context, rep Report, sel Selection, overlap time.Duration) (Report, error) {
	q := slurm.SacctQuery{Users: []string{sel.Own}, Clusters: slices.Clone(sel.Query.Clusters)}
	_, ok, err := c.Store.Watermark(ctx, WindowScope(c.Cluster, q))
	if err != nil || !ok {
		return rep, err
	}
	res, w, err := c.ImportWindow(ctx, q, WindowOptions{Overlap: overlap})
	rep.Accounting = rep.Accounting.Plus(res)
	rep.Window = &w
	if rep.Source == SourceNone {
		rep.Source = SourceSacct
	}
	return rep, err
}
