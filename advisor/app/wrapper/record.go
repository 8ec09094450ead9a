package wrapper

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/fsutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// record links the job sbatch printed to the script's fingerprint by
// putting it in the history's spool: a small file, which no database lock
// can hold up (within spoolDeadline). Any migadvisor command that opens the
// history moves the spool in first, so collect, status and recommend see
// every submission the wrapper ran sbatch for (in sbatch's place).
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
// with cl; false when nothing was submitted (createsJob) or there is no
// file to fingerprint (--wrap, stdin).
func (w *wrapper) submission(read *advice, cl *slurm.CommandLine, out []byte) (history.Submission, bool, error) {
	id, cluster := slurm.SubmittedJobID(out)
	if id == "" {
		return history.Submission{}, false, nil
	}
	sub, _, _, ok, err := w.submissionOf(read, cl)
	sub.JobID = id
	if cluster != "" {
		sub.Cluster = cluster
	}
	return sub, ok, err
}

// submissionOf is the record of a submission of cl but its job id, with
// the script and what the job asks for. The script and site the advice
// step read are used again (applying advice changes the command line,
// never the script), and what the job asks for where the advice computed
// it for cl (advice.resources); the profile asked for is known when it
// read the site (collect takes it from accounting anyway).
func (w *wrapper) submissionOf(read *advice, cl *slurm.CommandLine) (history.Submission, *slurm.Script, slurm.Resources, bool, error) {
	if !createsJob(cl, nil) {
		return history.Submission{}, nil, slurm.Resources{}, false, nil
	}
	file := w.scriptFile(cl.Script())
	var script *slurm.Script
	var site *catalog.Site
	if read != nil {
		script, site = read.script, read.site
	}
	if script == nil {
		var err error
		if script, err = readScript(file); errors.Is(err, errNotRegular) {
			return history.Submission{}, nil, slurm.Resources{}, false, nil // read by sbatch alone: no fingerprint to record
		} else if err != nil {
			return history.Submission{}, nil, slurm.Resources{}, false, fmt.Errorf("read the script: %w", err)
		}
	}
	if !createsJob(cl, script) || slurm.IsSweepVariant(script.Data) {
		return history.Submission{}, nil, slurm.Resources{}, false, nil
	}
	res := read.resources(cl, script, w.opt.Env)
	source := fsutil.Abs(file)
	return history.Submission{Cluster: w.getenv(EnvCluster), Fingerprint: script.Fingerprint(), Source: source,
		Script: source, WorkDir: w.opt.WorkDir, Submitted: w.opt.Now(), Profile: profileAsked(site, res)}, script, res, true, nil
}

// refusedScript are the problems of a script that sbatch refuses it for
// as it reads it, before any job is made: its lines, and its directives
// as getopt reads them (a value sbatch checks later is not judged here).
var refusedScript = map[string]bool{"empty-script": true, "no-shebang": true, "crlf": true, "nul-byte": true,
	"unknown-option": true, "missing-value": true, "invalid-directive": true}

// createsJob reports whether sbatch run with cl can create the job of a
// script file (script: as read, nil when not read yet): not without one
// (--wrap, stdin), not with --test-only (it says when the job would start),
// --help, --usage or --version (they print and exit), nor where sbatch
// refuses the command line (an unknown option, a value missing) or the
// script. A record of a submission that made no job would wait for one,
// and could take another submission's.
func createsJob(cl *slurm.CommandLine, script *slurm.Script) bool {
	if cl.Script() == "" {
		return false
	}
	for _, name := range []string{"test-only", "help", "usage", "version"} {
		if cl.Has(name) {
			return false
		}
	}
	for _, p := range cl.Problems {
		if p.Fatal {
			return false
		}
	}
	if script != nil {
		for _, p := range script.Problems {
			if p.Fatal && refusedScript[p.Code] {
				return false
			}
		}
	}
	return true
}

// profileAsked is the site's profile for the GPU request of a job that asks
// for res, "" when the site is not known or has none for it.
func profileAsked(site *catalog.Site, res slurm.Resources) string {
	if site == nil {
		return ""
	}
	types := res.GPUTypes()
	if len(types) == 0 {
		return ""
	}
	if p, ok := site.ProfileForType(types[0]); ok {
		return p.Name
	}
	return ""
}

// beside is the wrapper's part when the shim runs Slurm's sbatch itself, in
// its own place, and this process in the background (Options.Beside): the
// advice, on stderr, then the submission's record without the job id, which
// this process never sees; collect links it to its job (history.LinkPending)
// by the user, the job's name and directory, when it was submitted, and the
// script's hash where slurmdbd stored the job's script. The
// submission waits for none of it: it is the user's sbatch, untouched.
//
// sbatch may have read the script and returned before this process starts,
// and a loop may then remove or rewrite it: the script is read first, and
// a script gone, or changed since this process started, is no record (its
// fingerprint would be another script's).
func (w *wrapper) beside(ctx context.Context, cl *slurm.CommandLine) {
	if w.getenv(EnvDisable) == "1" {
		return
	}
	// The record's time: the shim starts this process before Slurm's
	// sbatch, so its job was submitted after it (history.PendingEarly).
	started := w.opt.Now()
	// The shim may run a copy of itself in Slurm's directory unread (see
	// scripts/sbatch): where no Slurm's sbatch follows, no job was made,
	// and there is nothing to advise or record.
	if _, err := w.opt.Sbatch.Find(w.getenv); err != nil {
		return
	}
	script, ok := w.scriptAsSubmitted(cl, time.Now()) // the file system's clock, not the record's
	w.submitted = script
	_, read := w.adviseWithin(ctx, cl, false)
	if !ok {
		return
	}
	if read == nil { // the advice ran out of time: the script is still the one read
		read = &advice{script: script}
	}
	if err := w.spool(ctx, func() (history.Submission, bool, error) { return w.pendingSubmission(read, cl, started) }); err != nil {
		// Beside sbatch, this process never learns whether sbatch made the job.
		w.warn("this submission is not in the history: %v", err)
	}
}

// scriptAsSubmitted is the submission's script as sbatch read it: false
// where there is none (--wrap, stdin), it is gone, or it changed after
// started.
func (w *wrapper) scriptAsSubmitted(cl *slurm.CommandLine, started time.Time) (*slurm.Script, bool) {
	if !createsJob(cl, nil) {
		return nil, false
	}
	file := w.scriptFile(cl.Script())
	before, err := os.Stat(file)
	if err != nil || !before.Mode().IsRegular() || before.ModTime().After(started) {
		return nil, false
	}
	script, err := readScript(file)
	if err != nil {
		return nil, false
	}
	if after, err := os.Stat(file); err != nil || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		return nil, false
	}
	return script, true
}

// pendingSubmission is the record of a submission whose job id is not
// known, made at a time: what collect finds its job by (its script's hash
// is checked against the one slurmdbd stored). False where sbatch makes no
// job (createsJob) or there is no file to fingerprint (--wrap, stdin).
func (w *wrapper) pendingSubmission(read *advice, cl *slurm.CommandLine, at time.Time) (history.Submission, bool, error) {
	sub, script, res, ok, err := w.submissionOf(read, cl)
	if err != nil || !ok {
		return sub, ok, err
	}
	sub.Submitted = at
	sub.ScriptHash = history.ScriptHash(script.Data)
	sub.JobName = res.JobName
	if sub.JobName == "" { // sbatch names a job after its script
		sub.JobName = filepath.Base(cl.Script())
	}
	sub.WorkDir = w.jobDir(cl, script)
	sub.User = w.user()
	sub.Token = fmt.Sprintf("%d-%d", time.Now().UnixNano(), os.Getpid())
	return sub, true, nil
}

// jobDir is the directory the job runs in, as sbatch sets it and
// accounting keeps it: --chdir on the command line, else in the script, as
// given when absolute, and when not after the directory sbatch runs in as
// $PWD names it (Slurm's make_full_path asks get_current_dir_name, which
// honours $PWD, as os.Getwd does: WorkDir); without --chdir, that
// directory with its links resolved (sbatch asks getcwd, which knows no
// $PWD).
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
	cwd := w.opt.WorkDir
	switch {
	case dir == "" && cwd != "":
		if physical, err := filepath.EvalSymlinks(cwd); err == nil {
			return physical
		}
		return cwd
	case dir == "":
		return cwd
	case filepath.IsAbs(dir) || cwd == "":
		return dir
	}
	return cwd + "/" + dir
}

// errNotRegular is a script that is not a regular file: a FIFO or a pipe
// (sbatch <(generate)), a device.
var errNotRegular = errors.New("not a regular file")

// readScript reads a submission's script where it is a regular file, and
// refuses anything else (errNotRegular) without opening it: a pipe's bytes
// are read once, and sbatch's to read (beside it, a second reader would
// take part of the script from the job it submits, or wait for ever for a
// writer that is gone).
func readScript(file string) (*slurm.Script, error) {
	info, err := os.Stat(file)
	if err != nil {
		return nil, fmt.Errorf("read batch script: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("read batch script %s: %w", file, errNotRegular)
	}
	return slurm.ReadScript(file)
}
