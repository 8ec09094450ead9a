package collect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/session"
	"github.com/migadvisor/migadvisor/slurm"
)

// ScriptsResult is what LinkScripts did.
type ScriptsResult struct {
	Linked int `json:"linked"` // jobs now linked to their script's fingerprint
	// Missing counts the batch jobs slurmdbd has no script for (asked
	// once): AccountingStoreFlags=job_script unset, or set after they ran.
	Missing int `json:"missing"`
	// Allocations counts the jobs with no script that ran none: salloc's
	// and srun's allocations (no batch step), which never have one.
	Allocations int `json:"allocations"`
	// NeverStarted counts those that never started (cancelled while they
	// waited): slurmdbd stores a script when its job starts, and a batch
	// job that never did has no batch step either.
	NeverStarted int `json:"never_started"`
	// KindsUnread is why the jobs with no script could not be told apart
	// ("" when they were): Missing then counts them all.
	KindsUnread string `json:"allocations_unknown,omitempty"`
	// Unshown counts the jobs sacct --batch-script said nothing of, not
	// even NONE: slurmdbd shows another user's job only to root,
	// SlurmUser, Slurm's operators and administrators and the coordinators
	// of its account, and none it no longer holds. Like the others, they
	// are asked for once.
	Unshown int `json:"unshown,omitempty"`
	// From is the saved file of `sacct --batch-script` output the scripts
	// were read from (collect --scripts-file); "": slurmdbd.
	From string `json:"from,omitempty"`
	// Unmatched counts the scripts in From that name no GPU job the
	// history holds with no script linked: CPU-only jobs, jobs of another
	// dump, jobs linked (or found with none) already.
	Unmatched int `json:"unmatched,omitempty"`
	// Ambiguous counts the jobs of an id From names that the history holds
	// under two cluster names: left unlinked, as the file names no cluster.
	Ambiguous int `json:"ambiguous,omitempty"`
}

// scriptSource is where the scripts slurmdbd stored are read: sacct
// (*slurm.Client), or a saved file of its output (scriptsFile).
type scriptSource interface {
	BatchScriptsShown(ctx context.Context, ids []string) (map[string][]byte, map[string]bool, error)
	BatchJobs(ctx context.Context, ids []string) (map[string]bool, error)
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
	jobs, err := c.Store.UnlinkedJobs(ctx, limit)
	if err != nil || len(jobs) == 0 {
		return ScriptsResult{}, err
	}
	return c.linkScripts(ctx, jobs, c.Slurm)
}

// LinkScriptsFrom is LinkScripts reading a saved file of `sacct
// --batch-script -j ...` output instead of asking slurmdbd: a dump's jobs
// read away from Slurm (collect --sacct-file ... --scripts-file ...). It
// links the jobs the file has a script for, by JobIDRaw or by the id users
// see (18_3, 123+1), among the jobs filed under clusters (those the same
// collect read: the file names no cluster; none: every cluster name the
// history holds). A job the file says nothing of is left for another
// file or for slurmdbd, not counted as having no script; an id the history
// holds under two cluster names is left unlinked (Ambiguous): the file
// names no cluster. The file is read as it streams, twice (its ids, then
// its scripts), and linked linkChunk jobs at a time: a site's year of
// scripts is never held whole.
func (c *Collector) LinkScriptsFrom(ctx context.Context, path string, clusters []string) (ScriptsResult, error) {
	res := ScriptsResult{From: path}
	f := scriptsFile{path: path}
	ids, err := f.ids()
	if err != nil {
		return res, err
	}
	jobs, err := c.Store.UnlinkedJobsAmong(ctx, ids, clusters)
	if err != nil {
		return res, err
	}
	byID := map[string][]history.UnlinkedJob{}
	for _, j := range jobs {
		byID[j.Key] = append(byID[j.Key], j)
		if j.JobID != "" && j.JobID != j.Key {
			byID[j.JobID] = append(byID[j.JobID], j)
		}
	}
	// An id that names jobs under two cluster names links neither by it;
	// a job another id of the file names alone is linked by that one.
	ambiguous := map[string]bool{}
	unsure := map[[2]string]bool{}
	for id, js := range byID {
		if len(js) > 1 {
			ambiguous[id] = true
			for _, j := range js {
				unsure[[2]string{j.Cluster, j.Key}] = true
			}
			delete(byID, id)
		}
	}
	var chunk []history.UnlinkedJob
	src := fileChunk{scripts: map[string][]byte{}, shown: map[string]bool{}}
	flush := func() error {
		got, err := c.linkScripts(ctx, chunk, src)
		res.add(got)
		chunk, src = chunk[:0], fileChunk{scripts: map[string][]byte{}, shown: map[string]bool{}}
		return err
	}
	done := map[[2]string]bool{} // a job the file names twice is linked once
	err = f.scan(func(id string, script []byte) error {
		js := byID[id]
		if len(js) == 0 {
			if !ambiguous[id] {
				res.Unmatched++
			}
			return nil
		}
		j := js[0]
		if k := [2]string{j.Cluster, j.Key}; !done[k] {
			done[k] = true
			chunk = append(chunk, j)
			src.shown[j.Key] = true
			if script != nil {
				src.scripts[j.Key] = script
			}
		}
		if len(chunk) < linkChunk {
			return nil
		}
		return flush()
	})
	if err != nil {
		return res, err
	}
	for k := range unsure {
		if !done[k] {
			res.Ambiguous++
		}
	}
	return res, flush()
}

// linkChunk is how many jobs LinkScriptsFrom links at a time. A variable
// for the tests.
var linkChunk = 5000

// add counts what another chunk of jobs linked.
func (r *ScriptsResult) add(o ScriptsResult) {
	r.Linked += o.Linked
	r.Missing += o.Missing
	r.Allocations += o.Allocations
	r.NeverStarted += o.NeverStarted
	r.Unshown += o.Unshown
	if r.KindsUnread == "" {
		r.KindsUnread = o.KindsUnread
	}
}

// linkScripts links jobs to the scripts src has for them.
func (c *Collector) linkScripts(ctx context.Context, jobs []history.UnlinkedJob, src scriptSource) (ScriptsResult, error) {
	var res ScriptsResult
	if len(jobs) == 0 {
		return res, nil
	}
	recs, err := c.recordsOf(ctx, jobs)
	if err != nil {
		return res, err
	}
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.Key
	}
	scripts, shown, err := src.BatchScriptsShown(ctx, ids)
	if err != nil {
		return res, err
	}
	var subs []history.Submission
	texts := map[string][]byte{}
	linked := map[[2]string]bool{}
	var missing []history.UnlinkedJob
	for _, j := range jobs {
		r := recs[[2]string{j.Cluster, j.Key}]
		data, ok := scripts[j.Key]
		if !ok && j.JobID != "" {
			// sacct names an array task's script by its id as users see
			// it (18_0), not by its JobIDRaw.
			data, ok = scripts[j.JobID]
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
		fp := s.Fingerprint()
		if r == nil || !session.IsInteractive(r) {
			// What it runs, for the report to read (an OnDemand app's
			// script, new for each session, says nothing of it).
			texts[fp] = data
		}
		sub := history.Submission{Cluster: j.Cluster, JobID: id, Fingerprint: fp,
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
	// The texts first: a job once linked is not asked about again, and a
	// text not kept then would never be.
	if err := c.Store.KeepScriptTexts(texts); err != nil {
		return res, err
	}
	if err := c.Store.RecordSubmissions(ctx, subs); err != nil {
		return res, err
	}
	if err := c.Store.MarkUnscripted(ctx, missing); err != nil {
		return res, err
	}
	var keys []string
	for _, j := range missing {
		switch {
		case !j.Started:
			res.NeverStarted++
		case !shown[j.Key] && !shown[j.JobID]:
			res.Unshown++ // sacct said nothing of it: another user's, or no longer in slurmdbd
		default:
			keys = append(keys, j.Key)
		}
	}
	res.Missing = len(keys)
	if len(keys) > 0 {
		// Which of them ran no batch script at all: an allocation has no
		// script to store, whatever AccountingStoreFlags says.
		batch, err := src.BatchJobs(ctx, keys)
		if err != nil {
			res.KindsUnread = err.Error()
			return res, nil
		}
		for _, k := range keys {
			if !batch[k] {
				res.Allocations++
			}
		}
		res.Missing -= res.Allocations
	}
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

// scriptsFile is a saved file of `sacct --batch-script -j ...` output,
// read as it streams.
type scriptsFile struct{ path string }

// ids are the job ids the file has a header for.
func (f scriptsFile) ids() ([]string, error) {
	var ids []string
	err := f.scan(func(id string, _ []byte) error {
		ids = append(ids, id)
		return nil
	})
	return ids, err
}

func (f scriptsFile) scan(fn func(id string, script []byte) error) error {
	r, err := os.Open(f.path)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := slurm.ScanBatchScripts(r, fn); err != nil {
		return fmt.Errorf("%s: %w", f.path, err)
	}
	return nil
}

// fileChunk is a chunk of a scripts file's jobs, by JobIDRaw, as
// LinkScriptsFrom read them: the scripts it has, and the jobs it shows
// (with "NONE" too).
type fileChunk struct {
	scripts map[string][]byte
	shown   map[string]bool
}

func (f fileChunk) BatchScriptsShown(context.Context, []string) (map[string][]byte, map[string]bool, error) {
	return f.scripts, f.shown, nil
}

// BatchJobs: a file of scripts does not say which jobs ran a batch step.
func (f fileChunk) BatchJobs(context.Context, []string) (map[string]bool, error) {
	return nil, errors.New("a saved file of scripts does not say which jobs ran a batch step")
}
