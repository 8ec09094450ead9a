package wrapper

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/fsutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// record links the job sbatch printed to the script's fingerprint by
// putting it in the history's spool: a small file, which no database lock
// can hold up (within spoolDeadline). Any migadvisor command that opens the
// history moves the spool in first, so collect, status and recommend see
// every submission.
func (w *wrapper) record(ctx context.Context, read *advice, cl *slurm.CommandLine, out []byte) error {
	return w.spool(ctx, func() (history.Submission, bool, error) { return w.submission(read, cl, out) })
}

// spool puts the submission made puts in the history's spool, within
// spoolDeadline; nothing when made says there is none.
func (w *wrapper) spool(ctx context.Context, made func() (history.Submission, bool, error)) error {
	spool := history.SpoolFor(w.dbPath())
	_, err := runWithin(ctx, spoolDeadline, func(context.Context) (bool, error) {
		sub, ok, err := made()
		if err != nil || !ok {
			return false, err
		}
		_, err = spool.Put(sub)
		return err == nil, err
	})
	return err
}

// submission is what the history keeps of the job sbatch accepted, run
// with cl; false when nothing was submitted (--test-only) or there is no
// file to fingerprint (--wrap, stdin).
func (w *wrapper) submission(read *advice, cl *slurm.CommandLine, out []byte) (history.Submission, bool, error) {
	id, cluster := slurm.SubmittedJobID(out)
	if id == "" {
		return history.Submission{}, false, nil
	}
	sub, _, ok, err := w.submissionOf(read, cl)
	sub.JobID = id
	if cluster != "" {
		sub.Cluster = cluster
	}
	return sub, ok, err
}

// submissionOf is the record of a submission of cl but its job id. The
// script and site the advice step read are used again (applying advice
// changes the command line, never the script); the profile asked for is
// known when it read the site (collect takes it from accounting anyway).
func (w *wrapper) submissionOf(read *advice, cl *slurm.CommandLine) (history.Submission, *slurm.Script, bool, error) {
	if cl.Script() == "" || cl.Has("test-only") {
		return history.Submission{}, nil, false, nil
	}
	file := w.scriptFile(cl.Script())
	var script *slurm.Script
	var site *catalog.Site
	if read != nil {
		script, site = read.script, read.site
	}
	if script == nil {
		var err error
		if script, err = slurm.ReadScript(file); err != nil {
			return history.Submission{}, nil, false, fmt.Errorf("read the script: %w", err)
		}
	}
	source := fsutil.Abs(file)
	return history.Submission{Cluster: w.getenv(EnvCluster), Fingerprint: script.Fingerprint(), Source: source,
		Script: source, WorkDir: w.opt.WorkDir, Submitted: w.opt.Now(), Profile: profileAsked(site, cl, script, w.opt.Env)}, script, true, nil
}

// profileAsked is the site's profile for the job's GPU request, "" when the
// site is not known or has none for it.
func profileAsked(site *catalog.Site, cl *slurm.CommandLine, script *slurm.Script, env []string) string {
	if site == nil {
		return ""
	}
	types := cl.Resources(script, env).GPUTypes()
	if len(types) == 0 {
		return ""
	}
	if p, ok := site.ProfileForType(types[0]); ok {
		return p.Name
	}
	return ""
}

// beside is the wrapper's part when the shim runs Slurm's sbatch itself, in
// its own place, and this process in the background (Options.Beside): the advice,
// on stderr, then the submission's record without the job id, which this
// process never sees; collect links it to its job (history.LinkPending) by
// the user, the job's name and directory, and when it was submitted. The
// submission waits for none of it: it is the user's sbatch, untouched.
func (w *wrapper) beside(ctx context.Context, cl *slurm.CommandLine) {
	if w.getenv(EnvDisable) == "1" {
		return
	}
	_, read := w.adviseWithin(ctx, cl, false)
	if err := w.spool(ctx, func() (history.Submission, bool, error) { return w.pendingSubmission(read, cl) }); err != nil {
		w.warn("the job is submitted but not in the history: %v", err)
	}
}

// pendingSubmission is the record of a submission whose job id is not
// known: what collect finds its job by. False where nothing is submitted
// (--test-only) or there is no file to fingerprint (--wrap, stdin).
func (w *wrapper) pendingSubmission(read *advice, cl *slurm.CommandLine) (history.Submission, bool, error) {
	sub, script, ok, err := w.submissionOf(read, cl)
	if err != nil || !ok {
		return sub, ok, err
	}
	sub.JobName = cl.Resources(script, w.opt.Env).JobName
	if sub.JobName == "" { // sbatch names a job after its script
		sub.JobName = filepath.Base(cl.Script())
	}
	sub.WorkDir = w.jobDir(cl, script)
	sub.User = w.user()
	sub.Token = fmt.Sprintf("%d-%d", time.Now().UnixNano(), os.Getpid())
	return sub, true, nil
}

// jobDir is the directory the job runs in, as sbatch sets it: --chdir on
// the command line, else in the script, else where sbatch runs.
func (w *wrapper) jobDir(cl *slurm.CommandLine, script *slurm.Script) string {
	dir := ""
	if o := script.LastOption("chdir"); o != nil {
		dir = o.Value
	}
	for _, o := range cl.Options {
		if o.Name == "chdir" {
			dir = o.Value
		}
	}
	switch {
	case dir == "":
		return w.opt.WorkDir
	case filepath.IsAbs(dir) || w.opt.WorkDir == "":
		return filepath.Clean(dir)
	}
	return filepath.Join(w.opt.WorkDir, dir)
}
