package collect

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/fsutil"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// Where is what a collector is opened on: the site, the history's file,
// Slurm, and the cluster name the user gave ("" to ask slurmctld).
type Where struct {
	Site    *catalog.Site
	DB      string
	Slurm   *slurm.Client
	Cluster string
}

// Open wires a collector to the site, the history (which the caller closes
// through col.Store) and Slurm. The site-wide history is created readable
// by every user: they read it (read-only) for advice; its admins fill it.
func Open(ctx context.Context, w Where) (*Collector, error) {
	patterns, err := SiteWorkPatterns(w.Site)
	if err != nil {
		return nil, err
	}
	shared := w.Site.History.SiteDB != "" && fsutil.SamePath(w.DB, w.Site.History.SiteDB)
	st, err := history.OpenWith(ctx, w.DB, history.Options{Shared: shared})
	if err != nil {
		return nil, err
	}
	return &Collector{Store: st, Site: w.Site, Slurm: w.Slurm, Cluster: w.Cluster,
		Fallbacks: []string{FallbackCluster}, Scan: slurm.ScanOptions{Patterns: patterns, Workloads: catalog.OutputWorkloads(w.Site)}}, nil
}

// OpenNamed is Open with the cluster named (NameCluster): the name a
// fallback took is said through say.
func OpenNamed(ctx context.Context, w Where, say func(sentence string)) (*Collector, error) {
	col, err := Open(ctx, w)
	if err != nil {
		return nil, err
	}
	saySetAside(col.Store, say)
	if err := col.NameCluster(ctx, w.Cluster, say); err != nil {
		col.Store.Close()
		return nil, err
	}
	return col, nil
}

// FindSubmitted links the submissions the sbatch shim made (the wrapper
// beside sbatch records them without their ids) to their jobs, so that
// wait and status with no ids have them; a job submitted a moment ago may
// not be in accounting yet, so for up to patience it asks again
// (FindPendingWithin). It returns how many still wait. What went wrong is
// one sentence through say: the command goes on with the jobs it tracks.
func FindSubmitted(ctx context.Context, w Where, patience time.Duration, say func(sentence string)) (waiting int) {
	if spooled, _ := history.SpoolFor(w.DB).Pending(); len(spooled) == 0 {
		if _, err := os.Stat(w.DB); err != nil {
			return 0 // no history and nothing on its way in: nothing to find
		}
	}
	failed := func(err error) {
		say(fmt.Sprintf("the jobs submitted through the sbatch wrapper since the last collect are not tracked yet: %v", err))
	}
	col, err := Open(ctx, w)
	if err != nil {
		failed(err)
		return 0
	}
	defer col.Store.Close()
	saySetAside(col.Store, say)
	if _, pending, err := col.Store.OldestPending(ctx); err != nil || !pending {
		return 0 // the status or wait says what is wrong with the history
	}
	if err := col.NameCluster(ctx, w.Cluster, say); err != nil {
		failed(err)
		return 0
	}
	res, err := col.FindPendingWithin(ctx, patience)
	if res.Dropped > 0 {
		say(fmt.Sprintf("%s through the sbatch wrapper found no job in accounting a day later (refused by sbatch? another user, name or directory?): dropped",
			textutil.Plural(res.Dropped, "submission")))
	}
	if res.ScriptsUnread != "" {
		say(StoredScriptsUnread(res.ScriptsUnread))
	}
	if err != nil {
		failed(err)
		return 0
	}
	return res.Waiting
}

// Submitter submits through Slurm and names the cluster of the jobs sbatch
// does not name (one cluster) the way every command does: once, with the
// history's name to fall back on, said through Say.
type Submitter struct {
	*slurm.Client
	Where Where
	Say   func(sentence string)
	name  string
}

// ClusterName is the cluster's name, chosen on the first call.
func (s *Submitter) ClusterName(ctx context.Context) (string, error) {
	if s.name != "" {
		return s.name, nil
	}
	st, err := history.Open(ctx, s.Where.DB)
	if err != nil {
		return "", err
	}
	defer st.Close()
	if s.Say != nil {
		saySetAside(st, s.Say)
	}
	ch, err := ChooseCluster(ctx, s.Where.Cluster, s.Client, st)
	if ch.Fallback != "" && s.Say != nil {
		s.Say(ch.Fallback)
	}
	s.name = ch.Name
	return s.name, err
}

// saySetAside says each record of the sbatch wrapper's that opening st set
// aside (history.SetAside): the one time it is known.
func saySetAside(st *history.Store, say func(sentence string)) {
	for _, a := range st.SetAside() {
		say(SetAsideSentence(a))
	}
}
