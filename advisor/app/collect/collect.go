package collect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// Collector turns what Slurm and the jobs say into history: accounting
// records (from sacct or a saved dump) and the evidence in job output files.
type Collector struct {
	Store   *history.Store
	Site    *catalog.Site
	Slurm   *slurm.Client // nil when only dumps and files are read
	Cluster string        // for records without a Cluster field
	// Fallbacks are the cluster names that stand for a cluster not known
	// when jobs were filed under them ("local"): FileTogether files their
	// jobs under the real name that holds them too.
	Fallbacks []string
	Scan      slurm.ScanOptions
	// Progress, when set, is told how many jobs each committed batch held.
	Progress func(jobs int)
	// SiteWide: the collect reads every user's jobs (--all-users). It
	// looks through no one's working directories for sessions' files that
	// no record names (ScanOutputs), and spares a site history's collect
	// a scan of its jobs.
	SiteWide bool
}

// ImportResult is what one import did.
type ImportResult struct {
	history.ImportStats
	Skipped []*slurm.LineError // records that could not be read, with their lines (the first slurm.MaxSkippedKept)
	// SkippedTotal counts every record that could not be read.
	SkippedTotal int
	Lines        int
	// JobstatsGPU counts the jobs whose jobstats summary held GPU figures
	// (ImportStats.Jobstats counts every summary read, a CPU job's too).
	JobstatsGPU int
	// Unplaced counts the jobs on GPUs the site gives no profile (neither
	// its names nor NVIDIA's for its slices: catalog.Site.ProfileNameOf),
	// by the GPU type accounting wrote ("" for an untyped GPU): no profile,
	// so no SU. The first MaxUnplacedKept types are kept; UnplacedMore
	// counts the jobs on the others.
	Unplaced     map[string]int
	UnplacedMore int
	// Clusters are the cluster names the jobs read are filed under: a
	// saved file of scripts is of them (LinkScriptsFrom).
	Clusters map[string]bool `json:"-"`
	// Lacks is what a dump's fields lack of what the report and recommend
	// need (Lacking).
	Lacks []MissingFields
}

// MaxUnplacedKept bounds ImportResult.Unplaced: a damaged dump could name
// a new GPU type on every line.
const MaxUnplacedKept = 1000

// Plus is r with o's figures added: two imports reported as one.
func (r ImportResult) Plus(o ImportResult) ImportResult {
	r.ImportStats = r.ImportStats.Add(o.ImportStats)
	r.Skipped = append(slices.Clone(r.Skipped), o.Skipped...)
	r.SkippedTotal += o.SkippedTotal
	r.Lines += o.Lines
	r.JobstatsGPU += o.JobstatsGPU
	r.Unplaced = maps.Clone(r.Unplaced)
	for t, n := range o.Unplaced {
		r.addUnplaced(t, n)
	}
	r.UnplacedMore += o.UnplacedMore
	r.Clusters = maps.Clone(r.Clusters)
	for name := range o.Clusters {
		r.addCluster(name)
	}
	if r.Lacks == nil {
		r.Lacks = o.Lacks
	}
	return r
}

func (r *ImportResult) addCluster(name string) {
	if r.Clusters == nil {
		r.Clusters = map[string]bool{}
	}
	r.Clusters[name] = true
}

func (r *ImportResult) addUnplaced(gpuType string, jobs int) {
	if _, ok := r.Unplaced[gpuType]; !ok && len(r.Unplaced) >= MaxUnplacedKept {
		r.UnplacedMore += jobs
		return
	}
	if r.Unplaced == nil {
		r.Unplaced = map[string]int{}
	}
	r.Unplaced[gpuType] += jobs
}

// GPUTypeJobs is a GPU type accounting names and how many jobs ran on it.
type GPUTypeJobs struct {
	Type string `json:"type"` // "" for an untyped GPU
	Jobs int    `json:"jobs"`
}

// UnplacedTypes are the GPU types of Unplaced, the most jobs first.
func (r ImportResult) UnplacedTypes() []GPUTypeJobs {
	out := make([]GPUTypeJobs, 0, len(r.Unplaced))
	for t, n := range r.Unplaced {
		out = append(out, GPUTypeJobs{t, n})
	}
	slices.SortFunc(out, func(a, b GPUTypeJobs) int {
		if a.Jobs != b.Jobs {
			return b.Jobs - a.Jobs
		}
		return strings.Compare(a.Type, b.Type)
	})
	return out
}

// count adds what a job read from accounting says to r's figures: its
// jobstats summary's GPU figures, and a GPU the site has no profile for.
// Only a job's own record counts (as it does in the import): steps alone
// update its usage.
func (c *Collector) count(r *ImportResult, j *slurm.AcctJob) {
	if !j.HasJobLine {
		return
	}
	cluster := j.Cluster
	if cluster == "" {
		cluster = c.Cluster // as the import files it
	}
	r.addCluster(cluster)
	if j.Jobstats != nil && len(j.Jobstats.GPUs) > 0 {
		r.JobstatsGPU++
	}
	if j.GPUCount > 0 && c.Site.ProfileNameOf(j.GPUType, j.GPUCount) == "" {
		r.addUnplaced(j.GPUType, 1)
	}
}

func (c *Collector) importOptions() history.ImportOptions {
	return history.ImportOptions{Cluster: c.Cluster, Profile: c.Site.ProfileNameOf, Progress: c.Progress}
}

// ImportDump imports a saved `sacct --parsable2` dump with its header line,
// filing the records that name no cluster under c.Cluster (as Run does
// with a dump, the name given).
func (c *Collector) ImportDump(ctx context.Context, r io.Reader) (ImportResult, error) {
	return c.importDump(ctx, r, RunOptions{Cluster: c.Cluster})
}

// importReader imports the jobs of r, showing each to seen (when not nil)
// before it is stored.
func (c *Collector) importReader(ctx context.Context, r io.Reader, seen func(*slurm.AcctJob)) (ImportResult, error) {
	sr, err := slurm.NewSacctReader(r)
	if err != nil {
		return ImportResult{}, err
	}
	return c.importFrom(ctx, sr, seen)
}

// importFrom imports the jobs sr reads (its header already read), showing
// each to seen (when not nil) before it is stored.
func (c *Collector) importFrom(ctx context.Context, sr *slurm.SacctReader, seen func(*slurm.AcctJob)) (ImportResult, error) {
	var res ImportResult
	next := func() (*slurm.AcctJob, error) {
		// Called by the import's reader alone, which has ended when
		// ImportJobs returns.
		j, err := sr.Next()
		if j != nil {
			c.count(&res, j)
			if seen != nil {
				seen(j)
			}
		}
		return j, err
	}
	opt := c.importOptions()
	opt.Carries = sr.HasField // a narrower dump keeps what the history holds of the rest
	st, err := c.Store.ImportJobs(ctx, next, opt)
	res.ImportStats, res.Skipped, res.SkippedTotal, res.Lines = st, sr.Skipped, sr.SkippedTotal, sr.Lines
	return res, err
}

// ImportSacct runs sacct for q and imports its output as it streams.
func (c *Collector) ImportSacct(ctx context.Context, q slurm.SacctQuery) (ImportResult, error) {
	return c.importSacct(ctx, q, nil)
}

func (c *Collector) importSacct(ctx context.Context, q slurm.SacctQuery, seen func(*slurm.AcctJob)) (ImportResult, error) {
	if c.Slurm == nil {
		return ImportResult{}, errors.New("no Slurm client")
	}
	var res ImportResult
	err := c.Slurm.Sacct(ctx, q, func(r io.Reader) error {
		var err error
		res, err = c.importReader(ctx, r, seen)
		return err
	})
	return res, err
}

// FileTogether files each job once, under its cluster's real name: the
// jobs a fallback name holds that a real one holds too go there with their
// evidence and submissions (history.MergeFallbackJobs), and the submissions
// whose jobs are under another name only go with them. It returns the jobs
// it moved, by name.
func (c *Collector) FileTogether(ctx context.Context) ([]history.Refiled, error) {
	moved, err := c.Store.MergeFallbackJobs(ctx, c.Fallbacks)
	if err != nil {
		return moved, err
	}
	_, err = c.Store.RelinkSubmissions(ctx)
	return moved, err
}

// WaitFinal re-reads accounting for the jobs until each has its final,
// complete record (slurmdbd first shows a stub for short jobs), or until
// timeout. It returns the ids still incomplete, and apart from them those
// Slurm has no job of (see ImportByID), which it does not wait for: their
// record will never come.
func (c *Collector) WaitFinal(ctx context.Context, ids []string, timeout time.Duration) (open, unknown []string, err error) {
	deadline := time.Now().Add(timeout)
	delay := 500 * time.Millisecond
	for {
		if _, unknown, err = c.ImportByID(ctx, slurm.SacctQuery{Jobs: ids, AllUsers: true}); err != nil {
			return ids, nil, err
		}
		tr, err := c.Store.Tracked(ctx, history.TrackedFilter{JobIDs: ids})
		if err != nil {
			return ids, unknown, err
		}
		open = slices.DeleteFunc(history.Unended(tr), func(id string) bool { return slices.Contains(unknown, id) })
		if len(open) == 0 || time.Now().After(deadline) {
			return open, unknown, nil
		}
		select {
		case <-ctx.Done():
			return open, unknown, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 4*time.Second)
	}
}

// ImportByID imports accounting's records of the jobs q names by id (the
// ids sbatch printed) and returns those Slurm has no job of: accounting
// returned nothing for them, the history holds none, and the queue does
// not know them. A mistyped id is one: its record will never come.
func (c *Collector) ImportByID(ctx context.Context, q slurm.SacctQuery) (ImportResult, []string, error) {
	returned := map[string]bool{}
	res, err := c.importSacct(ctx, q, func(j *slurm.AcctJob) { returned[j.Key], returned[j.ArrayJob] = true, true })
	if err != nil {
		return res, nil, err
	}
	var unseen []string
	for _, id := range q.Jobs {
		if returned[id] {
			continue
		}
		where, err := c.Store.ClustersOfJob(ctx, id)
		if err != nil {
			return res, nil, err
		}
		if len(where.Names) == 0 {
			unseen = append(unseen, id)
		}
	}
	return res, notQueued(ctx, c.Slurm, unseen), nil
}

// SlurmLacks lists the jobs of ids (the ids sbatch printed) that Slurm has
// no job of: accounting, asked by id, has no record of them, and the queue
// does not know them. It imports nothing, for a reader of the history.
func SlurmLacks(ctx context.Context, sl *slurm.Client, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	returned := map[string]bool{}
	err := sl.Sacct(ctx, slurm.SacctQuery{Jobs: ids, AllUsers: true}, func(r io.Reader) error {
		sr, err := slurm.NewSacctReader(r)
		if err != nil {
			return err
		}
		for {
			j, err := sr.Next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			returned[j.Key], returned[j.ArrayJob] = true, true
		}
	})
	if err != nil {
		return nil, err
	}
	unseen := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return returned[id] })
	return notQueued(ctx, sl, unseen), nil
}

// notQueued lists the ids squeue does not know; none when it cannot be
// asked: a job is never called unknown on a guess.
func notQueued(ctx context.Context, sl *slurm.Client, ids []string) []string {
	if len(ids) == 0 || sl == nil {
		return nil
	}
	queued, err := sl.Queue(ctx, ids)
	if err != nil {
		return nil
	}
	known := map[string]bool{}
	for _, q := range queued {
		base, _, _ := strings.Cut(q.ID, "_")
		base, _, _ = strings.Cut(base, "+")
		known[base], known[q.Raw] = true, true
	}
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return known[id] })
}

// SiteWorkPatterns compiles the site's extra work patterns.
func SiteWorkPatterns(site *catalog.Site) ([]slurm.WorkPattern, error) {
	var out []slurm.WorkPattern
	for _, p := range site.WorkPatterns {
		re, err := regexp.Compile(p.Regex)
		if err != nil {
			return nil, fmt.Errorf("site %s: work pattern %s: %w", site.Name, strconv.Quote(p.Name), err)
		}
		out = append(out, slurm.WorkPattern{Name: p.Name, Regex: re, Unit: p.Unit})
	}
	return out, nil
}
