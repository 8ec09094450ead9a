package collect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/history"
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
	return r
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
	st, err := c.Store.ImportJobs(ctx, next, c.importOptions())
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

// OutputResult is what the scan of job output files found.
type OutputResult struct {
	Scanned   int      // files read
	Unchanged int      // files already scanned, not changed since
	Missing   []string // jobs whose output file was not found (of those that could have written one)
	GPUOOMs   int
	HostOOMs  int
	Work      int      // files that reported work done
	Capped    []string // files larger than the cap, read at their head and tail
	GPUMemory int      // jobs with the monitor's GPU memory figures
	// Emulated counts the runs of emulations (migadvisor emulate) found
	// beside the output of the jobs that ran them, and recorded.
	Emulated int
	// Unread are the monitor summaries and emulation records (or their
	// runs' files) that could not be read, each with why, naming the file.
	Unread []string
}

// ScanOutputs finds the output files of each job in the history that is
// linked to a submission (or, with dirs, any job) and records their evidence:
// its stdout, and its stderr when --error sent that to a file of its own (an
// OOM traceback usually goes there), and the runs of an emulation the job
// ran (migadvisor-emulate-<job>/ beside its output or in its working
// directory). Files already scanned are read again, with the emulation,
// only when their size or time changed.
func (c *Collector) ScanOutputs(ctx context.Context, dirs []string, keys [][2]string) (OutputResult, error) {
	var res OutputResult
	recs, err := c.Store.History(ctx, history.HistoryFilter{Tracked: len(dirs) == 0 && len(keys) == 0, Keys: keys})
	if err != nil {
		return res, err
	}
	done, err := c.Store.ScannedOutputs(ctx)
	if err != nil {
		return res, err
	}
	stderr, err := c.recordedStderr(ctx, recs)
	if err != nil {
		return res, err
	}
	find := outputFinder{index: indexOutputDirs(dirs), scripts: map[string]slurm.OutputFiles{}, stderr: stderr}
	for i := range recs {
		r := &recs[i]
		if r.State == "PENDING" || r.Stub {
			continue
		}
		paths := find.files(r)
		if len(paths) == 0 {
			// An emulation in the job's working directory is read without
			// its output: its runs are the evidence, and without them the
			// job's own time (every profile's run together) would pass for
			// a run of the script on the whole GPU.
			if r.WorkDir != "" && findEmulation(r, filepath.Join(r.WorkDir, "-")) != "" {
				n, err := c.readEmulation(ctx, r, filepath.Join(r.WorkDir, "-"), &res)
				if err != nil {
					return res, fmt.Errorf("job %s: %w", r.JobID, err)
				}
				res.Emulated += n
				continue
			}
			if r.Fingerprint != "" && wroteOutput(r) {
				res.Missing = append(res.Missing, r.JobID)
			}
			continue
		}
		// What the job left beside its output counts in its state: the
		// monitor's summary and an emulation's record are written after the
		// last line of output, and a scan in between must not hide them.
		state := paths
		for _, extra := range []string{filepath.Join(filepath.Dir(paths[0]), slurm.SummaryName(r.Key)), findEmulation(r, paths[0])} {
			if extra != "" && isFile(extra) {
				state = append(slices.Clip(state), extra)
			}
		}
		size, mtime := filesState(state)
		if prev, ok := done[[2]string{r.Cluster, r.Key}]; ok && prev.Path == paths[0] && prev.Size == size && prev.MTime.Unix() == mtime.Unix() {
			res.Unchanged++
			continue
		}
		ev, err := c.scanFiles(paths, &res)
		if err != nil {
			return res, fmt.Errorf("job %s: %w", r.JobID, err)
		}
		if err := applySummary(ev, filepath.Join(filepath.Dir(paths[0]), slurm.SummaryName(r.Key))); err != nil {
			res.Unread = append(res.Unread, err.Error())
		}
		// The first file stands for them all; its size is theirs together,
		// and its time the latest, so a change to either is seen.
		if err := c.Store.RecordOutput(ctx, r.Cluster, r.Key, paths[0], size, mtime, ev); err != nil {
			return res, err
		}
		res.Scanned++
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
		n, err := c.readEmulation(ctx, r, paths[0], &res)
		if err != nil {
			return res, fmt.Errorf("job %s: %w", r.JobID, err)
		}
		res.Emulated += n
	}
	return res, nil
}

// wroteOutput reports whether a job may have an output file to find: not
// one Slurm could not open it for (exit 0:53), nor one cancelled before it
// ran.
func wroteOutput(r *history.JobRecord) bool {
	if advisor.Explain(r, nil).Kind == advisor.OutcomeNoOutputFile {
		return false
	}
	// A job that never started wrote nothing, whatever its state: one
	// cancelled while it waited, or one Slurm failed before it began (a
	// node that did not boot, a request it could never satisfy).
	neverRan := r.ElapsedS != nil && *r.ElapsedS == 0 && r.Start == nil
	return !neverRan
}

// scanFiles reads a job's files, its stdout first, into one evidence.
func (c *Collector) scanFiles(paths []string, res *OutputResult) (*slurm.OutputEvidence, error) {
	var ev *slurm.OutputEvidence
	for _, p := range paths {
		more, err := slurm.ScanFile(p, c.Scan)
		if err != nil {
			return nil, err
		}
		if more.Truncated {
			res.Capped = append(res.Capped, p)
		}
		if ev == nil {
			ev = more
			continue
		}
		mergeEvidence(ev, more)
	}
	return ev, nil
}

// mergeEvidence adds what a job's separate error file showed to what its
// output showed. Errors (OOMs, Slurm's cancellations) are usually in the
// former, work and metrics in the latter; where both have a figure the
// output's stands, except the GPU OOM with the larger need (either is a
// lower bound) and the monitor line with the larger peak.
func mergeEvidence(ev, more *slurm.OutputEvidence) {
	if o := more.GPUOOM; o != nil && (ev.GPUOOM == nil || o.NeedMiB > ev.GPUOOM.NeedMiB) {
		oom := *o
		oom.Line = 0 // a line of the other file: not one of the recorded path's
		ev.GPUOOM = &oom
	}
	if ev.HostOOM == nil && more.HostOOM != nil {
		oom := *more.HostOOM
		oom.Line = 0
		ev.HostOOM = &oom
	}
	ev.TimeLimit = ev.TimeLimit || more.TimeLimit
	ev.Cancelled = ev.Cancelled || more.Cancelled
	if more.WorkSource != "" && (ev.WorkSource == "" || more.WorkSource == "MIGADVISOR_WORK" && ev.WorkSource != "MIGADVISOR_WORK") {
		ev.Work, ev.WorkUnit, ev.WorkSource = more.Work, more.WorkUnit, more.WorkSource
	}
	if ev.FirstError == nil {
		ev.FirstError = more.FirstError
	}
	ev.Metrics = mergeMaps(ev.Metrics, more.Metrics)
	ev.Versions = mergeMaps(ev.Versions, more.Versions)
	ev.Settings = mergeMaps(ev.Settings, more.Settings)
	if more.GPUSource != "" && (ev.GPUSource == "" || more.GPUPeakMiB > ev.GPUPeakMiB) {
		ev.GPUPeakMiB, ev.GPUUsedPeakMiB, ev.GPUTotalMiB, ev.GPUDevice = more.GPUPeakMiB, more.GPUUsedPeakMiB, more.GPUTotalMiB, more.GPUDevice
		ev.GPUProfile, ev.GPUUtil, ev.GPUUtilMean, ev.GPUUtilMax = more.GPUProfile, more.GPUUtil, more.GPUUtilMean, more.GPUUtilMax
		ev.GPUMemUtilMean, ev.GPUMemUtilMax = more.GPUMemUtilMean, more.GPUMemUtilMax
		ev.GPUSamples, ev.GPUSource = more.GPUSamples, more.GPUSource
	}
	ev.Bytes += more.Bytes
	ev.Truncated = ev.Truncated || more.Truncated
}

// mergeMaps adds the keys of more that m lacks.
func mergeMaps[V any](m, more map[string]V) map[string]V {
	for k, v := range more {
		if m == nil {
			m = map[string]V{}
		}
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	return m
}

// filesState is the files' size together and the latest of their times.
func filesState(paths []string) (size int64, mtime time.Time) {
	for _, p := range paths {
		if info, err := os.Stat(p); err == nil {
			size += info.Size()
			if info.ModTime().After(mtime) {
				mtime = info.ModTime()
			}
		}
	}
	return size, mtime
}

// recordedStderr is the stderr each submission of recs recorded (scontrol's
// at submission, or the stored script's --error for a linked job), by
// cluster and the id sbatch printed.
func (c *Collector) recordedStderr(ctx context.Context, recs []history.JobRecord) (map[[2]string]string, error) {
	seen := map[string]bool{}
	var ids []string
	for _, r := range recs {
		if r.Fingerprint != "" && !seen[r.ArrayJob] {
			seen[r.ArrayJob] = true
			ids = append(ids, r.ArrayJob)
		}
	}
	out := map[[2]string]string{}
	const chunk = 500 // ids in one query, well under SQLite's limit on parameters
	for start := 0; start < len(ids); start += chunk {
		subs, err := c.Store.Tracked(ctx, history.TrackedFilter{JobIDs: ids[start:min(start+chunk, len(ids))]})
		if err != nil {
			return nil, err
		}
		for _, s := range subs {
			if s.Stderr != "" {
				out[[2]string{s.Cluster, s.JobID}] = s.Stderr
			}
		}
	}
	return out, nil
}

// applySummary puts the monitor's summary file, when the job left one beside
// its output, in place of what its stderr lines said: the file has the same
// figures and is there even when stderr went elsewhere.
func applySummary(ev *slurm.OutputEvidence, path string) error {
	sum, err := slurm.ReadMonitorSummary(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	peak, d := sum.Peak()
	if d == nil {
		return nil
	}
	ev.GPUPeakMiB, ev.GPUUsedPeakMiB, ev.GPUTotalMiB = peak, d.PeakUsedMiB, d.TotalMiB
	ev.GPUDevice, ev.GPUProfile, ev.GPUUtil, ev.GPUSamples = d.Label(), d.Profile, d.Utilization, d.Samples
	ev.GPUUtilMean, ev.GPUUtilMax = slurm.Unknown, slurm.Unknown
	if d.UtilGPUMean != nil && d.UtilGPUMax != nil {
		ev.GPUUtilMean, ev.GPUUtilMax = *d.UtilGPUMean, *d.UtilGPUMax
	}
	ev.GPUMemUtilMean, ev.GPUMemUtilMax = slurm.Unknown, slurm.Unknown
	if d.UtilMemMean != nil && d.UtilMemMax != nil {
		ev.GPUMemUtilMean, ev.GPUMemUtilMax = *d.UtilMemMean, *d.UtilMemMax
	}
	ev.GPUSource = "summary"
	return nil
}

// outputFinder finds a job's output files: the paths recorded at
// submission (scontrol's, or a linked job's stored script's), the script's
// --output and --error expanded for the job, or files in the --outputs
// directories named by one of Slurm's usual patterns.
type outputFinder struct {
	index   map[string]string            // --outputs: file name → path
	scripts map[string]slurm.OutputFiles // script → its --output and --error, read once for all its jobs
	stderr  map[[2]string]string         // recorded stderr, by cluster and the id sbatch printed
}

// files lists a job's files that exist: its stdout first, then its stderr
// when that is a file of its own; only the stderr when no stdout is found.
func (f *outputFinder) files(r *history.JobRecord) []string {
	cands := f.candidates(r)
	// The stderr of a later candidate with the same stdout counts: a sweep
	// records scontrol's stdout alone, and its script names the --error.
	errorOf := func(out string) string {
		for _, c := range cands {
			if c[0] == out && c[1] != out && isFile(c[1]) {
				return c[1]
			}
		}
		return ""
	}
	for _, c := range cands {
		if isFile(c[0]) {
			if errFile := errorOf(c[0]); errFile != "" {
				return []string{c[0], errFile}
			}
			return []string{c[0]}
		}
	}
	for _, c := range cands {
		if c[1] != c[0] && isFile(c[1]) {
			return []string{c[1]}
		}
	}
	return nil
}

// candidates are the job's likely stdout and stderr paths, best first.
func (f *outputFinder) candidates(r *history.JobRecord) [][2]string {
	var out [][2]string
	recordedErr := f.stderr[[2]string{r.Cluster, r.ArrayJob}]
	switch {
	case strings.HasPrefix(r.Script, linkedPrefix) && r.Stdout != "":
		// An array's tasks share one record of patterns; a job's are its paths.
		if arrayTask(r.JobID) != "" {
			out = append(out, [2]string{expandFor(r, r.Stdout), expandFor(r, recordedErr)})
		} else {
			out = append(out, [2]string{r.Stdout, recordedErr})
		}
	case r.Stdout != "" && !strings.Contains(r.Stdout, "%") && r.ArrayJob == r.JobID:
		if strings.Contains(recordedErr, "%") {
			recordedErr = ""
		}
		out = append(out, [2]string{r.Stdout, recordedErr})
	}
	if r.Script != "" && !strings.HasPrefix(r.Script, linkedPrefix) {
		files, seen := f.scripts[r.Script]
		if !seen {
			if s, err := slurm.ReadScript(r.Script); err == nil {
				files = s.OutputFiles()
			}
			f.scripts[r.Script] = files
		}
		if files.Stdout == "" { // unreadable: Slurm's defaults
			files = defaultOutputFiles(r)
		}
		out = append(out, [2]string{expandFor(r, files.Stdout), expandFor(r, files.Stderr)})
	}
	for _, name := range candidateNames(r) {
		if p, ok := f.index[name]; ok {
			errFile := f.index[strings.TrimSuffix(name, ".out")+".err"]
			out = append(out, [2]string{p, errFile})
		}
	}
	return out
}

// defaultOutputFiles is Slurm's default output for the job: slurm-%j.out,
// or slurm-%A_%a.out for an array task.
func defaultOutputFiles(r *history.JobRecord) slurm.OutputFiles {
	if arrayTask(r.JobID) != "" {
		return slurm.OutputFiles{Stdout: "slurm-%A_%a.out"}
	}
	return slurm.OutputFiles{Stdout: "slurm-%j.out"}
}

func isFile(path string) bool {
	if path == "" {
		return false
	}
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}

// expandFor is a --output or --error pattern expanded for the job, relative
// to its working directory; "" when it is relative and the directory unknown.
func expandFor(r *history.JobRecord, pattern string) string {
	if pattern == "" {
		return ""
	}
	p := slurm.ExpandFilePattern(pattern, slurm.PatternJob{
		JobID: r.Key, ArrayJob: r.ArrayJob, TaskID: arrayTask(r.JobID), Name: r.Name, User: r.User, Node: slurm.FirstHost(r.NodeList),
	})
	return underWorkDir(r.WorkDir, p)
}

// underWorkDir makes path absolute in the job's working directory; "" when
// the directory is unknown.
func underWorkDir(workDir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	if workDir == "" {
		return ""
	}
	return filepath.Join(workDir, path)
}

func arrayTask(id string) string {
	_, task, ok := strings.Cut(id, "_")
	if !ok {
		return ""
	}
	return task
}

// candidateNames are the usual file names for a job's output, most specific first.
func candidateNames(r *history.JobRecord) []string {
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

// ScriptsResult is what LinkScripts did.
type ScriptsResult struct {
	Linked  int `json:"linked"`  // jobs now linked to their script's fingerprint
	Missing int `json:"missing"` // jobs slurmdbd has no script for (asked once)
}

// linkedPrefix starts the script name of a job linked by LinkScripts:
// "sacct:<cluster>/<id sbatch printed>".
const linkedPrefix = "sacct:"

// LinkScripts links up to limit jobs that no submission names (jobs not
// submitted through migadvisor, or other users' in a site-wide history) to
// their scripts, from the batch scripts slurmdbd keeps (sacct
// --batch-script; AccountingStoreFlags=job_script). This is how a history
// filled with `collect --all-users` knows whose runs share a script. Each
// submission (an array's tasks are one) records where the script sent its
// output and errors, so that ScanOutputs reads them.
func (c *Collector) LinkScripts(ctx context.Context, limit int) (ScriptsResult, error) {
	var res ScriptsResult
	jobs, err := c.Store.UnlinkedJobs(ctx, limit)
	if err != nil || len(jobs) == 0 {
		return res, err
	}
	recs, err := c.recordsOf(ctx, jobs)
	if err != nil {
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
	var subs []history.Submission
	linked := map[[2]string]bool{}
	var missing []history.UnlinkedJob
	for _, j := range jobs {
		r := recs[[2]string{j.Cluster, j.Key}]
		data, ok := scripts[j.Key]
		if !ok && r != nil {
			// sacct names an array task's script by its id as users see
			// it (18_0), not by its JobIDRaw.
			data, ok = scripts[r.JobID]
		}
		if !ok {
			missing = append(missing, j)
			continue
		}
		res.Linked++
		id := j.Key
		if r != nil && r.ArrayJob != "" {
			id = r.ArrayJob // the id sbatch printed: the history finds an array's tasks by it
		}
		if linked[[2]string{j.Cluster, id}] {
			continue
		}
		linked[[2]string{j.Cluster, id}] = true
		source := linkedPrefix + j.Cluster + "/" + id
		s := slurm.Parse(source, data)
		sub := history.Submission{Cluster: j.Cluster, JobID: id, Fingerprint: s.Fingerprint(),
			Source: source, Script: source, Profile: j.Profile, WorkDir: j.WorkDir, Submitted: time.Unix(j.Submit, 0)}
		if slurm.IsSweepVariant(data) {
			// A probe's or sweep's measurement, not a run its user makes
			// (advisor.Run.Swept). Accounting keeps no sweep directory: the
			// job's own stands in.
			sub.SweepDir = j.WorkDir
		}
		if r != nil {
			sub.Stdout, sub.Stderr = linkedFiles(s.OutputFiles(), r)
		}
		subs = append(subs, sub)
	}
	if err := c.Store.RecordSubmissions(ctx, subs); err != nil {
		return res, err
	}
	if err := c.Store.MarkUnscripted(ctx, missing); err != nil {
		return res, err
	}
	res.Missing = len(missing)
	return res, nil
}

// linkedFiles are a linked job's stdout and stderr (the same path when
// --error is not given, as scontrol shows them): the paths expanded for the
// job, or for an array, whose tasks' files differ, the patterns in its
// working directory, expanded for each task when it is scanned.
func linkedFiles(files slurm.OutputFiles, r *history.JobRecord) (stdout, stderr string) {
	resolve := func(pattern string) string {
		if arrayTask(r.JobID) != "" {
			return underWorkDir(r.WorkDir, pattern)
		}
		return expandFor(r, pattern)
	}
	stdout = resolve(files.Stdout)
	if files.Stderr == "" {
		return stdout, stdout
	}
	return stdout, resolve(files.Stderr)
}

// recordsOf reads the history's records of jobs, by cluster and key.
func (c *Collector) recordsOf(ctx context.Context, jobs []history.UnlinkedJob) (map[[2]string]*history.JobRecord, error) {
	out := map[[2]string]*history.JobRecord{}
	const chunk = 400 // two parameters a job, well under SQLite's limit
	for start := 0; start < len(jobs); start += chunk {
		var keys [][2]string
		for _, j := range jobs[start:min(start+chunk, len(jobs))] {
			keys = append(keys, [2]string{j.Cluster, j.Key})
		}
		recs, err := c.Store.History(ctx, history.HistoryFilter{Keys: keys})
		if err != nil {
			return nil, err
		}
		for i := range recs {
			out[[2]string{recs[i].Cluster, recs[i].Key}] = &recs[i]
		}
	}
	return out, nil
}
