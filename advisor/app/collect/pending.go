package collect

import (
	"context"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// PendingLinked is what LinkPending did: the history's links, and why the
// scripts slurmdbd stored could not be read where they could not (""
// otherwise). Without them, records of one job name that time cannot tell
// apart stay ambiguous, and a record is paired with a job by time alone:
// the user is told, never left to think there were none.
type PendingLinked struct {
	history.PendingLinks
	ScriptsUnread string
}

// LinkPending links the sbatch wrapper's records made without their job
// ids to their jobs (history.Store.LinkPendingWith), each pair checked
// against the script slurmdbd stored for the job where it stored one
// (AccountingStoreFlags=job_script): a record is never linked to a job
// that ran another script, and records of one job name that time cannot
// tell apart are told apart by their scripts. What is still ambiguous is
// left for a later collect, and counted.
func (c *Collector) LinkPending(ctx context.Context, now, asked time.Time) (PendingLinked, error) {
	var unread error
	stored := func(ctx context.Context, cluster string, ids []string) (map[string][]byte, error) {
		scripts, err := c.storedScripts(ctx, cluster, ids)
		if err != nil && unread == nil {
			unread = err
		}
		return scripts, nil
	}
	links, err := c.Store.LinkPendingWith(ctx, now, asked, stored)
	res := PendingLinked{PendingLinks: links}
	if unread != nil {
		res.ScriptsUnread = unread.Error()
	}
	return res, err
}

// storedScripts reads the scripts slurmdbd stored for jobs of this
// collector's cluster (sacct --batch-script); none for another cluster's,
// none where the collector's cluster was never named (a collect of an
// empty dump asks Slurm nothing), or where Slurm cannot be asked. An sacct that cannot read them (a Slurm
// before 21.08, slurmdbd down) is an error: LinkPending decides the pairs
// without them, and says why.
func (c *Collector) storedScripts(ctx context.Context, cluster string, ids []string) (map[string][]byte, error) {
	if c.Slurm == nil || c.Cluster == "" || cluster != c.Cluster {
		return nil, nil
	}
	scripts, err := c.Slurm.BatchScripts(ctx, ids)
	if err != nil {
		return nil, err
	}
	return scripts, nil
}
