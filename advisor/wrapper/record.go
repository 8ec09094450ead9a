package wrapper

import (
	"context"
	"fmt"

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
	spool := history.SpoolFor(w.dbPath())
	_, err := runWithin(ctx, spoolDeadline, func(context.Context) (bool, error) {
		sub, ok, err := w.submission(read, cl, out)
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
// file to fingerprint (--wrap, stdin). The script and site the advice step
// read are used again (applying advice changes the command line, never the
// script); the profile asked for is known when it read the site (collect
// takes it from accounting anyway).
func (w *wrapper) submission(read *advice, cl *slurm.CommandLine, out []byte) (history.Submission, bool, error) {
	id, cluster := slurm.SubmittedJobID(out)
	if id == "" || cl.Script() == "" || cl.Has("test-only") {
		return history.Submission{}, false, nil
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
			return history.Submission{}, false, fmt.Errorf("read the script: %w", err)
		}
	}
	source := fsutil.Abs(file)
	sub := history.Submission{Cluster: cluster, JobID: id, Fingerprint: script.Fingerprint(), Source: source,
		Script: source, WorkDir: w.opt.WorkDir, Submitted: w.opt.Now(), Profile: profileAsked(site, cl, script, w.opt.Env)}
	if sub.Cluster == "" {
		sub.Cluster = w.getenv(EnvCluster)
	}
	return sub, true, nil
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
