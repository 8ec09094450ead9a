package collect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/slurm"
)

// OutputResult is what the scan of job output files found.
type OutputResult struct {
	Scanned   int // files read
	Unchanged int // files already scanned, not changed since
	// Missing are the jobs whose output file was not found (of those that
	// could have written one) and not said before; MissingBefore counts
	// those said by an earlier collect (NoteMissing), not said again.
	Missing       []string
	MissingBefore int
	missingKeys   [][2]string // Missing's cluster and job key, for NoteMissing
	GPUOOMs       int
	HostOOMs      int
	Work          int      // files that reported work done
	Capped        []string // files larger than the cap, read at their head and tail
	GPUMemory     int      // jobs with the monitor's GPU memory figures
	// Emulated counts the runs of emulations (migadvisor emulate) found
	// beside the output of the jobs that ran them, and recorded.
	Emulated int
	// Unread are the monitor summaries and emulation records (or their
	// runs' files) that could not be read, each with why, naming the file.
	Unread []string
	// UnreadDirs are the --outputs directories that could not be read,
	// each with why: no file was looked for there.
	UnreadDirs []DirError
	// Predating are the jobs whose output file was last written before
	// the job started: another job's of the same id (a cluster beside it
	// writing to the same directory, or one from before Slurm's ids
	// started again), not read.
	Predating []string
}

// predatingSlack is how much earlier than its job's start a job's output
// may be last written and still be its own: the clocks of the node that
// ran it and of the file server may differ.
const predatingSlack = 10 * time.Minute

// DirError is a directory that could not be read, and why.
type DirError struct {
	Dir    string `json:"dir"`
	Reason string `json:"reason"`
}

// ScanOutputs finds the output files of each job in the history that is
// linked to a submission (or, with dirs, any job) and records their evidence:
// its stdout, and its stderr when --error sent that to a file of its own (an
// OOM traceback usually goes there), and the runs of an emulation the job
// ran (migadvisor-emulate-<job>/ beside its output or in its working
// directory). A job whose output is not found, a session's (salloc, srun
// --pty, an Open OnDemand app), is read from what its working directory
// holds: OnDemand's output.log, the monitor's summary (workDirs.files);
// without dirs, the collecting user's recent sessions are looked at too
// (withOwnSessions). Files already scanned are read again, with the
// emulation, only when their size or time changed.
func (c *Collector) ScanOutputs(ctx context.Context, dirs []string, keys [][2]string) (OutputResult, error) {
	var res OutputResult
	tracked := len(dirs) == 0 && len(keys) == 0
	recs, err := c.Store.History(ctx, history.HistoryFilter{Tracked: tracked, Keys: keys})
	if err != nil {
		return res, err
	}
	me := collectingUser()
	if tracked && !c.SiteWide {
		if recs, err = c.withOwnSessions(ctx, recs, me, time.Now()); err != nil {
			return res, err
		}
	}
	done, err := c.Store.ScannedOutputs(ctx)
	if err != nil {
		return res, err
	}
	stderr, err := c.recordedStderr(ctx, recs)
	if err != nil {
		return res, err
	}
	index, unreadDirs := indexOutputDirs(dirs)
	res.UnreadDirs = unreadDirs
	find := outputFinder{index: index, scripts: map[string]slurm.OutputFiles{}, stderr: stderr, me: me}
	for i := range recs {
		r := &recs[i]
		if r.State == "PENDING" || r.Stub {
			continue
		}
		files := find.jobFiles(r)
		if files.none() {
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
			if prev, ok := done[[2]string{r.Cluster, r.Key}]; ok && prev.Path != "" {
				continue // read by an earlier collect, from where its output was then
			}
			if r.Fingerprint != "" && wroteOutput(r) {
				if done[[2]string{r.Cluster, r.Key}].SaidMissing() {
					res.MissingBefore++ // said once: a collect every 30 minutes does not say it again
				} else {
					res.Missing = append(res.Missing, r.JobID)
					res.missingKeys = append(res.missingKeys, [2]string{r.Cluster, r.Key})
				}
			}
			continue
		}
		outSize, outTime := filesState(files.outputs)
		if r.Start != nil && !outTime.IsZero() && outTime.Before(r.Start.Add(-predatingSlack)) {
			res.Predating = append(res.Predating, r.JobID)
			continue
		}
		if err := c.scanJob(ctx, r, files, outSize, outTime, done, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// NoteMissing records in the history that the jobs res.Missing names were
// said to have no output file found (history.Store.NoteOutputsMissing):
// the command that says so calls it, and the next scan counts them in
// MissingBefore instead.
func (c *Collector) NoteMissing(ctx context.Context, res OutputResult) error {
	return c.Store.NoteOutputsMissing(ctx, res.missingKeys)
}

// scanJob records the evidence of a job's files, unless they are as they
// were when last scanned, and reads the emulation the job ran.
func (c *Collector) scanJob(ctx context.Context, r *history.JobRecord, files jobFiles, outSize int64, outTime time.Time,
	done map[[2]string]history.ScannedOutput, res *OutputResult) error {
	// What the job left beside its output counts in its state: the
	// monitor's summary and an emulation's record are written after the
	// last line of output, and a scan in between must not hide them. The
	// outputs themselves were looked at already (outSize, outTime).
	beside := slices.Clone(files.summaries)
	if extra := findEmulation(r, files.recorded()); extra != "" && isFile(extra) {
		beside = append(beside, extra)
	}
	size, mtime := filesState(beside)
	size += outSize
	if outTime.After(mtime) {
		mtime = outTime
	}
	prev, ok := done[[2]string{r.Cluster, r.Key}]
	if ok && prev.Path == files.recorded() && prev.Size == size && prev.MTime.Unix() == mtime.Unix() {
		res.Unchanged++
		return nil
	}
	ev, err := c.evidenceOf(files, res)
	if err != nil {
		return fmt.Errorf("job %s: %w", r.JobID, err)
	}
	// The first file stands for them all; its size is theirs together,
	// and its time the latest, so a change to either is seen.
	if err := c.Store.RecordOutput(ctx, r.Cluster, r.Key, files.recorded(), size, mtime, ev); err != nil {
		return err
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
	n, err := c.readEmulation(ctx, r, files.recorded(), res)
	if err != nil {
		return fmt.Errorf("job %s: %w", r.JobID, err)
	}
	res.Emulated += n
	return nil
}

// evidenceOf reads a job's output files, stdout first, and puts its
// monitor's summary in place of the monitor's lines.
func (c *Collector) evidenceOf(files jobFiles, res *OutputResult) (*slurm.OutputEvidence, error) {
	var ev *slurm.OutputEvidence
	var err error
	if len(files.outputs) > 0 {
		ev, err = c.scanFiles(files.outputs, res)
	} else {
		ev, err = slurm.ScanOutput(strings.NewReader(""), c.Scan) // a session's summary alone: the evidence of no output
	}
	if err != nil {
		return nil, err
	}
	if files.inWorkDir {
		res.Unread = append(res.Unread, applyWorkDirSummaries(ev, files.summaries)...)
		return ev, nil
	}
	if err := applySummary(ev, summaryBeside(files.outputs[0], files.jobKey)); err != nil {
		res.Unread = append(res.Unread, err.Error())
	}
	return ev, nil
}

// wroteOutput reports whether a job may have an output file to find: not
// one Slurm could not open it for (exit 0:53), nor one cancelled before it
// ran.
func wroteOutput(r *history.JobRecord) bool {
	if outcome.Of(r, nil).Kind == outcome.NoOutputFile {
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
	if ev.Resembles == "" { // GROMACS prints its banner on stderr
		ev.Resembles = more.Resembles
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
	applyMonitorSummary(ev, sum)
	return nil
}

// applyMonitorSummary puts a summary's figures of its device with the
// largest peak in ev; a summary that sampled nothing leaves ev as it was.
func applyMonitorSummary(ev *slurm.OutputEvidence, sum *slurm.MonitorSummary) {
	peak, d := sum.Peak()
	if d == nil {
		return
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
}

// summaryBeside is the path of the monitor's summary of a job beside its
// output file.
func summaryBeside(output, jobKey string) string {
	return filepath.Join(filepath.Dir(output), slurm.SummaryName(jobKey))
}

// outputFinder finds a job's output files: the paths recorded at
// submission (scontrol's, or a linked job's stored script's), the script's
// --output and --error expanded for the job, or files in the --outputs
// directories named by one of Slurm's usual patterns.
type outputFinder struct {
	index   map[string]string            // --outputs: file name → path
	scripts map[string]slurm.OutputFiles // script → its --output and --error, read once for all its jobs
	stderr  map[[2]string]string         // recorded stderr, by cluster and the id sbatch printed
	workDir workDirs                     // for a job whose output is not found: a session's files
	me      string                       // the collecting user, whose sessions' working directories are looked in
}

// jobFiles are the files a job's evidence is read from.
type jobFiles struct {
	jobKey string
	// outputs are its stdout, then its stderr when that is a file of its
	// own; or an OnDemand session's output.log.
	outputs []string
	// summaries are, for a job whose output was not found, the monitor's
	// summaries of it or its steps in its working directory; else its
	// summary beside its output, when there is one.
	summaries []string
	// inWorkDir: found in the working directory by the names collect
	// guesses for a job whose output it did not find (workDirs.files).
	inWorkDir bool
}

func (f jobFiles) none() bool { return len(f.outputs) == 0 && len(f.summaries) == 0 }

// recorded is the file that stands for them all in the history: the
// first output, else the first summary.
func (f jobFiles) recorded() string {
	if len(f.outputs) > 0 {
		return f.outputs[0]
	}
	return f.summaries[0]
}

// jobFiles finds a job's files: its output files and the summary beside
// them, else what its working directory holds of a session's
// (workDirs.files). Working directories are looked in for the jobs whose
// outputs collect reads by Slurm's names there too (those linked to a
// script), and for the collecting user's own: not for every job of a
// site-wide history.
func (f *outputFinder) jobFiles(r *history.JobRecord) jobFiles {
	if paths := f.files(r); len(paths) > 0 {
		files := jobFiles{jobKey: r.Key, outputs: paths}
		if p := summaryBeside(paths[0], r.Key); isFile(p) {
			files.summaries = []string{p}
		}
		return files
	}
	if r.Fingerprint == "" && (f.me == "" || r.User != f.me) {
		return jobFiles{}
	}
	outputs, summaries := f.workDir.files(r)
	return jobFiles{jobKey: r.Key, outputs: outputs, summaries: summaries, inWorkDir: true}
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

// indexOutputDirs maps the file names under dirs (not recursive) to their
// paths; unread are the directories that could not be read, and why (a
// mistyped --outputs, one without permission), which the collect says:
// skipped without a word, their jobs would read as having no output.
func indexOutputDirs(dirs []string) (index map[string]string, unread []DirError) {
	index = map[string]string{}
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			why := err
			var pe *fs.PathError
			if errors.As(err, &pe) {
				why = pe.Err // the directory is named beside it
			}
			unread = append(unread, DirError{Dir: d, Reason: why.Error()})
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
	return index, unread
}
