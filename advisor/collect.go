package advisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/store"
	"github.com/migadvisor/migadvisor/bench/monitor"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// Collector turns what Slurm and the jobs say into history: accounting
// records (from sacct or a saved dump) and the evidence in job output files.
type Collector struct {
	Store   *store.Store
	Site    *catalog.Site
	Slurm   *slurm.Client // nil when only dumps and files are read
	Cluster string        // for records without a Cluster field
	Scan    slurm.ScanOptions
	// Progress, when set, is told how many jobs each committed batch held.
	Progress func(jobs int)
}

// ImportResult is what one import did.
type ImportResult struct {
	store.ImportStats
	Skipped []*slurm.LineError // records that could not be read, with their lines (the first slurm.MaxSkippedKept)
	// SkippedTotal counts every record that could not be read.
	SkippedTotal int
	Lines        int
}

// ProfileOf maps accounting's typed GPU to the site's profile.
func (c *Collector) ProfileOf(gpuType string, count int) string {
	if count <= 0 {
		return ""
	}
	p, ok := c.Site.ProfileForType(gpuType)
	if !ok {
		return ""
	}
	return p.Name
}

func (c *Collector) importOptions() store.ImportOptions {
	return store.ImportOptions{Cluster: c.Cluster, Profile: c.ProfileOf, Progress: c.Progress}
}

// ImportDump imports a saved `sacct --parsable2` dump with its header line.
func (c *Collector) ImportDump(ctx context.Context, r io.Reader) (ImportResult, error) {
	return c.importReader(ctx, r, nil)
}

// importReader imports the jobs of r, showing each to seen (when not nil)
// before it is stored.
func (c *Collector) importReader(ctx context.Context, r io.Reader, seen func(*slurm.AcctJob)) (ImportResult, error) {
	sr, err := slurm.NewSacctReader(r)
	if err != nil {
		return ImportResult{}, err
	}
	next := sr.Next
	if seen != nil {
		next = func() (*slurm.AcctJob, error) {
			j, err := sr.Next()
			if j != nil {
				seen(j)
			}
			return j, err
		}
	}
	st, err := c.Store.ImportJobs(ctx, next, c.importOptions())
	return ImportResult{ImportStats: st, Skipped: sr.Skipped, SkippedTotal: sr.SkippedTotal, Lines: sr.Lines}, err
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

// OutputResult is what the scan of job output files found.
type OutputResult struct {
	Scanned   int      // files read
	Unchanged int      // files already scanned, not changed since
	Missing   []string // jobs whose output file was not found
	GPUOOMs   int
	HostOOMs  int
	Work      int      // files that reported work done
	Capped    []string // files larger than the cap, read at their head and tail
	GPUMemory int      // jobs with the monitor's GPU memory figures
	Unread    []string // monitor summaries that could not be read, with why
}

// ScanOutputs finds the output file of each job in the history that is linked
// to a submission (or, with dirs, any job) and records its evidence. A file
// already scanned is read again only when its size or time changed.
func (c *Collector) ScanOutputs(ctx context.Context, dirs []string, keys [][2]string) (OutputResult, error) {
	var res OutputResult
	recs, err := c.Store.History(ctx, store.HistoryFilter{Tracked: len(dirs) == 0 && len(keys) == 0, Keys: keys})
	if err != nil {
		return res, err
	}
	done, err := c.Store.ScannedOutputs(ctx)
	if err != nil {
		return res, err
	}
	index := indexOutputDirs(dirs)
	patterns := map[string]string{} // script -> its --output, read once for all its jobs
	for i := range recs {
		r := &recs[i]
		if r.State == "PENDING" || r.Stub {
			continue
		}
		path := c.outputPath(r, index, patterns)
		if path == "" {
			if r.Fingerprint != "" {
				res.Missing = append(res.Missing, r.JobID)
			}
			continue
		}
		info, err := os.Stat(path)
		if err != nil {
			res.Missing = append(res.Missing, r.JobID)
			continue
		}
		if prev, ok := done[[2]string{r.Cluster, r.Key}]; ok && prev.Path == path && prev.Size == info.Size() && prev.MTime.Unix() == info.ModTime().Unix() {
			res.Unchanged++
			continue
		}
		ev, err := slurm.ScanFile(path, c.Scan)
		if err != nil {
			return res, fmt.Errorf("job %s: %w", r.JobID, err)
		}
		if err := applySummary(ev, filepath.Join(filepath.Dir(path), monitor.SummaryName(r.Key))); err != nil {
			res.Unread = append(res.Unread, err.Error())
		}
		if err := c.Store.RecordOutput(ctx, r.Cluster, r.Key, path, info.Size(), info.ModTime(), ev); err != nil {
			return res, err
		}
		res.Scanned++
		if ev.Truncated {
			res.Capped = append(res.Capped, path)
		}
		if ev.GPUOOM != nil {
			res.GPUOOMs++
		}
		if ev.HostOOM != nil {
			res.HostOOMs++
		}
		if ev.WorkSource != "" {
			res.Work++
		}
		if ev.GPUSource != "" {
			res.GPUMemory++
		}
	}
	return res, nil
}

// applySummary puts the monitor's summary file, when the job left one beside
// its output, in place of what its stderr lines said: the file has the same
// figures and is there even when stderr went elsewhere.
func applySummary(ev *slurm.OutputEvidence, path string) error {
	sum, err := monitor.ReadSummary(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	peak, d := sum.PeakMiB()
	if d == nil {
		return nil
	}
	ev.GPUPeakMiB, ev.GPUUsedPeakMiB, ev.GPUTotalMiB = peak, d.PeakUsedMiB, d.TotalMiB
	ev.GPUDevice, ev.GPUProfile, ev.GPUUtil, ev.GPUSamples = d.Label(), d.Profile, d.Utilization, d.Samples
	ev.GPUUtilMean, ev.GPUUtilMax = slurm.Unknown, slurm.Unknown
	if d.UtilGPUMean != nil && d.UtilGPUMax != nil {
		ev.GPUUtilMean, ev.GPUUtilMax = *d.UtilGPUMean, *d.UtilGPUMax
	}
	ev.GPUSource = "summary"
	return nil
}

// outputPath finds a job's output: the path scontrol gave at submission, the
// script's --output pattern expanded for the job, or a file in the --outputs
// directories named by one of Slurm's usual patterns.
func (c *Collector) outputPath(r *store.JobRecord, index, patterns map[string]string) string {
	if r.Stdout != "" && !strings.Contains(r.Stdout, "%") && r.ArrayJob == r.JobID {
		if _, err := os.Stat(r.Stdout); err == nil {
			return r.Stdout
		}
	}
	if r.Script != "" {
		if p := scriptOutputPath(r, patterns); p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	for _, name := range candidateNames(r) {
		if p, ok := index[name]; ok {
			return p
		}
	}
	return ""
}

// scriptOutputPath expands the script's --output (default slurm-%j.out, or
// slurm-%A_%a.out for an array task) for this job, relative to its work dir.
func scriptOutputPath(r *store.JobRecord, patterns map[string]string) string {
	pattern, seen := patterns[r.Script]
	if !seen {
		if s, err := slurm.ReadScript(r.Script); err == nil {
			for _, o := range s.Options {
				if o.Name == "output" {
					pattern = o.Value
				}
			}
		}
		patterns[r.Script] = pattern
	}
	if pattern == "" {
		pattern = "slurm-%j.out"
		if strings.Contains(r.JobID, "_") {
			pattern = "slurm-%A_%a.out"
		}
	}
	p := slurm.ExpandFilePattern(pattern, slurm.PatternJob{
		JobID: r.Key, ArrayJob: r.ArrayJob, TaskID: arrayTask(r.JobID), Name: r.Name, User: r.User, Node: firstNode(r.NodeList),
	})
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.WorkDir, p)
	}
	return p
}

func arrayTask(id string) string {
	_, task, ok := strings.Cut(id, "_")
	if !ok {
		return ""
	}
	return task
}

func firstNode(list string) string {
	n, _, _ := strings.Cut(list, ",")
	if strings.ContainsAny(n, "[ ") {
		return ""
	}
	return n
}

// candidateNames are the usual file names for a job's output, most specific first.
func candidateNames(r *store.JobRecord) []string {
	id, name := r.Key, r.Name
	if task := arrayTask(r.JobID); task != "" {
		return []string{
			fmt.Sprintf("%s_%s_%s.out", name, r.ArrayJob, task), fmt.Sprintf("%s-%s_%s.out", name, r.ArrayJob, task),
			fmt.Sprintf("slurm-%s_%s.out", r.ArrayJob, task), fmt.Sprintf("%s.%s.out", name, id), fmt.Sprintf("slurm-%s.out", id),
		}
	}
	return []string{
		fmt.Sprintf("slurm-%s.out", id), fmt.Sprintf("%s.%s.out", name, id), fmt.Sprintf("%s-%s.out", name, id),
		fmt.Sprintf("%s_%s.out", name, id),
	}
}

// indexOutputDirs maps the file names under dirs (not recursive) to their paths.
func indexOutputDirs(dirs []string) map[string]string {
	index := map[string]string{}
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.Type().IsRegular() {
				if _, dup := index[e.Name()]; !dup {
					index[e.Name()] = filepath.Join(d, e.Name())
				}
			}
		}
	}
	return index
}

// WaitFinal re-reads accounting for the jobs until each has its final,
// complete record (slurmdbd first shows a stub for short jobs), or until
// timeout. It returns the ids still incomplete.
func (c *Collector) WaitFinal(ctx context.Context, ids []string, timeout time.Duration) ([]string, error) {
	deadline := time.Now().Add(timeout)
	delay := 500 * time.Millisecond
	for {
		if _, err := c.ImportSacct(ctx, slurm.SacctQuery{Jobs: ids, AllUsers: true}); err != nil {
			return ids, err
		}
		tr, err := c.Store.Tracked(ctx, store.TrackedFilter{JobIDs: ids})
		if err != nil {
			return ids, err
		}
		open := store.Unended(tr)
		if len(open) == 0 || time.Now().After(deadline) {
			return open, nil
		}
		select {
		case <-ctx.Done():
			return open, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 4*time.Second)
	}
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

// ScriptsResult is what LinkScripts did.
type ScriptsResult struct {
	Linked  int `json:"linked"`  // jobs now linked to their script's fingerprint
	Missing int `json:"missing"` // jobs slurmdbd has no script for (asked once)
}

// LinkScripts links up to limit jobs that no submission names (jobs not
// submitted through migadvisor, or other users' in a site-wide history) to
// their scripts, from the batch scripts slurmdbd keeps (sacct
// --batch-script; AccountingStoreFlags=job_script). This is how a history
// filled with `collect --all-users` knows whose runs share a script.
func (c *Collector) LinkScripts(ctx context.Context, limit int) (ScriptsResult, error) {
	var res ScriptsResult
	jobs, err := c.Store.UnlinkedJobs(ctx, limit)
	if err != nil || len(jobs) == 0 {
		return res, err
	}
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.Key
	}
	scripts, err := c.Slurm.BatchScripts(ctx, ids)
	if err != nil {
		return res, err
	}
	var subs []store.Submission
	var missing []store.UnlinkedJob
	for _, j := range jobs {
		data, ok := scripts[j.Key]
		if !ok {
			missing = append(missing, j)
			continue
		}
		source := "sacct:" + j.Cluster + "/" + j.Key
		subs = append(subs, store.Submission{Cluster: j.Cluster, JobID: j.Key, Fingerprint: slurm.Parse(source, data).Fingerprint(),
			Source: source, Script: source, Profile: j.Profile, WorkDir: j.WorkDir, Submitted: time.Unix(j.Submit, 0)})
	}
	if err := c.Store.RecordSubmissions(ctx, subs); err != nil {
		return res, err
	}
	if err := c.Store.MarkUnscripted(ctx, missing); err != nil {
		return res, err
	}
	return ScriptsResult{Linked: len(subs), Missing: len(missing)}, nil
}
