package collect

import (
	"context"
	"time"

	"github.com/migadvisor/migadvisor/advisor/history"
)

// LinkPending links the sbatch wrapper's records made without their job
// ids to their jobs (history.Store.LinkPendingWith), each pair checked
// against the script slurmdbd stored for the job where it stored one
// (AccountingStoreFlags=job_script): a record is never linked to a job
// that ran another script, and records of one job name that time cannot
// tell apart are told apart by their scripts. What is still ambiguous is
// left for a later collect, and counted.
func (c *Collector) LinkPending(ctx context.Context, now, asked time.Time) (history.PendingLinks, error) {
	return c.Store.LinkPendingWith(ctx, now, asked, c.storedScripts)
}

// storedScripts reads the scripts slurmdbd stored for jobs of this
// collector's cluster (sacct --batch-script); none for another cluster's,
// or where Slurm cannot be asked. An sacct that cannot read them (a Slurm
// before 21.08) leaves the pairs to be decided without them: what time
// cannot decide stays ambiguous.
func (c *Collector) storedScripts(ctx context.Context, cluster string, ids []string) (map[string][]byte, error) {
	if c.Slurm == nil || (c.Cluster != "" && cluster != c.Cluster) {
		return nil, nil
	}
	scripts, err := c.Slurm.BatchScripts(ctx, ids)
	if err != nil {
		return nil, nil
	}
	return scripts, nil
}
