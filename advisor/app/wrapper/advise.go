package wrapper

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/lint"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// userCommandLine parses the user's arguments once, and takes --mig-apply
// out of sbatch's options, reporting whether it was there: after the script
// it is the script's own argument, and the value of an option that takes
// one ("-J --mig-apply"), and stays. The flag is unknown to sbatch, and
// would be a problem of the command line; taken out of the one parse
// (slurm.CommandLine.WithoutUnknownOption), the rest reads as sbatch reads
// the arguments without it, by the parser's own rules: none are repeated
// here.
func userCommandLine(args []string) (*slurm.CommandLine, bool) {
	cl := slurm.ParseCommandLine(args)
	for i, a := range args {
		if a != ApplyFlag {
			continue
		}
		if without, ok := cl.WithoutUnknownOption(i); ok {
			return without, true
		}
	}
	return cl, false
}

// advice is what the advice step found.
type advice struct {
	site   *catalog.Site
	script *slurm.Script // nil when there is no script file
	// res is what the job asks for with cl, the command line the advice
	// was decided for (its resources over the script's), computed once
	// (script and site read, not a probe's variant): set where site is.
	cl     *slurm.CommandLine
	res    slurm.Resources
	lint   []string // what sbatch or the site would reject, or the job will not get
	submit *advisor.SubmitAdvice
	// warning is what the advice went on without (the site-wide history
	// unreadable): the submission's one line about a problem.
	warning string
}

// adviseWithin prints the advice for the submission and returns the command
// line to run sbatch with (the user's, or with apply the advice's) and what
// the advice step read, nil when it ran out of time.
func (w *wrapper) adviseWithin(ctx context.Context, cl *slurm.CommandLine, apply bool) (*slurm.CommandLine, *advice) {
	adv, err := runWithin(ctx, w.opt.AdviceDeadline, func(ctx context.Context) (*advice, error) {
		return w.advise(ctx, cl)
	})
	if err != nil {
		w.warn("no advice this time: %v", err)
		return cl, adv
	}
	if adv.warning != "" {
		w.warn("%s", adv.warning)
	}
	for _, line := range adv.lint {
		w.say("%s", line)
	}
	a := adv.submit
	switch {
	case a == nil:
		return cl, adv
	case len(a.Settings) == 0: // a warning with nothing to change
		w.say("%s.", a.Message)
		return cl, adv
	case !apply && w.filter:
		w.say("%s. %s", a.Message, filterNextTime(a))
		return cl, adv
	case !apply:
		w.say("%s. %s", a.Message, nextTime(a))
		return cl, adv
	}
	var changes []string
	for _, s := range a.Settings {
		changes = append(changes, s.Before()+" -> "+slurm.ShellWord(s.String()))
	}
	w.say("%s.", a.Message)
	w.say("submitting on %s: %s", a.Profile, strings.Join(changes, ", "))
	return slurm.ParseCommandLine(cl.WithSettings(a.Settings)), adv
}

// nextTime is what the advice asks of the user when it is not applied:
// this job is sbatch's already (beside it, it may be queued before the
// advice is printed), so the change is for the next submission, never a
// resubmission, which would run the job twice and be paid twice.
func nextTime(a *advisor.SubmitAdvice) string {
	return fmt.Sprintf("Next time, submit with %s, or with %s (or %s=1) to have it changed for you.", a.Use(), ApplyFlag, EnvApply)
}

// cancelInstead is what to do about the job sbatch just made with advice
// that was not applied, once its id is known (in sbatch's place only):
// cancel it while it waits, and submit it again with the change. cluster:
// where sbatch named one, scancel needs it too.
func cancelInstead(a *advisor.SubmitAdvice, id, cluster string) string {
	scancel := "scancel " + id
	if cluster != "" {
		scancel = "scancel -M " + slurm.ShellWord(cluster) + " " + id
	}
	return fmt.Sprintf("to have job %s changed now, cancel it while it waits (%s) and submit it again with %s", id, scancel, a.Use())
}

// notApplied says why advice asked to be applied cannot be, "" when it
// can or sbatch makes no job: the job has no script file to read or
// change (a script on stdin, --wrap). The submission goes on unchanged.
func notApplied(cl *slurm.CommandLine) string {
	if cl.Script() != "" {
		return ""
	}
	for _, name := range []string{"test-only", "help", "usage", "version"} {
		if cl.Has(name) {
			return ""
		}
	}
	if cl.Has("wrap") {
		return "the advice cannot be applied to a --wrap command, so it is submitted unchanged; put the command in a script file and submit that to have it applied"
	}
	return "the advice cannot be applied to a script on standard input, so it is submitted unchanged; pass the script as a file (sbatch " + ApplyFlag + " job.sh) to have it applied"
}

// advise judges the job from the user's history and the site's. What it
// read is returned with an error too, for the record.
func (w *wrapper) advise(ctx context.Context, cl *slurm.CommandLine) (*advice, error) {
	adv := &advice{}
	path := cl.Script()
	if path == "" {
		return adv, nil // --wrap or stdin: no file to fingerprint
	}
	file := w.scriptFile(path)
	script := w.submitted
	if script == nil {
		var err error
		script, err = readScript(file)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotRegular) {
			return adv, nil // sbatch says so itself, or reads it alone
		}
		if err != nil {
			return nil, err
		}
	}
	adv.script = script
	if slurm.IsSweepVariant(script.Data) {
		return adv, nil // a probe's measurement: its profile is the point
	}
	site, err := w.opt.LoadSite(w.getenv(EnvSite))
	if err != nil {
		return adv, err
	}
	adv.site = site
	// What the job asks for, computed once for the submission: the
	// recommendation, the advice's settings and the record read it.
	adv.cl, adv.res = cl, cl.Resources(script, w.opt.Env)
	adv.lint = lint.SubmissionProblems(script, site, path, lint.Options{SubmitDir: w.opt.WorkDir, CommandLine: cl, Env: w.opt.Env})
	runs, peers, prior, err := w.runs(ctx, adv, file)
	if err != nil || len(runs) == 0 {
		return adv, err
	}
	// Now and User make the monthly rate the user's, up to today.
	job := advisor.Job{Script: path, Fingerprint: script.Fingerprint(), Resources: adv.res,
		Runs: runs, QueueWaitS: map[string]float64{}, Now: w.opt.Now(), User: w.user(), Peers: peers, Reads: script}
	if prior { // as recommend's prior: the workload it looks like (the reference sets are read only then)
		if set, ok := catalog.ReferenceFor(site); ok {
			job.Resembles, _ = advisor.RecogniseWorkload(set, script)
		}
	}
	rec, err := advisor.Recommend(site, job, advisor.Options{})
	if err != nil {
		return adv, fmt.Errorf("recommend: %w", err)
	}
	adv.submit, err = advisor.ForSubmission(site, rec, cl, adv.res, script, w.opt.Env)
	return adv, err
}

// resources are what cl asks for with script: those the advice computed,
// where they are of cl and script (the submission's record of the command
// line advised), else computed now (the command line with the advice
// applied, which is another; no advice in time).
func (a *advice) resources(cl *slurm.CommandLine, script *slurm.Script, env []string) slurm.Resources {
	if a != nil && a.site != nil && a.cl == cl && a.script == script {
		return a.res
	}
	return cl.Resources(script, env)
}

// scriptFile is the script's path as this process opens it: relative to
// the directory sbatch runs in.
func (w *wrapper) scriptFile(path string) string {
	if filepath.IsAbs(path) || w.opt.WorkDir == "" {
		return path
	}
	return filepath.Join(w.opt.WorkDir, path)
}

// runs are the script's runs, and its earlier versions' (those at its
// path), in the user's advice index (beside their history) and the site's
// (published beside its snapshot), each job once; and the peers both hold,
// as recommend reads them, when the runs leave the job to a prior (prior).
// An index (or its peers) that cannot be read leaves the other, and a
// warning in adv; the user's not written yet (no collect, track or wait
// since it was) is no problem.
func (w *wrapper) runs(_ context.Context, adv *advice, file string) (runs []advisor.Run, peers []runmodel.Peer, prior bool, err error) {
	own, err := w.opt.OpenIndex(index.OwnPath(w.dbPath()))
	switch {
	case err == nil:
		defer own.Close()
	case errors.Is(err, fs.ErrNotExist):
		own = nil
	default:
		own = nil
		alone := "so the site's runs alone are used"
		if adv.site.History.SiteIndexPath() == "" {
			alone = "and the site keeps none, so no runs are used"
		}
		adv.warning = fmt.Sprintf("your advice index is not readable, %s (any 'migadvisor collect' writes it again): %v", alone, err)
	}
	var site []*index.Reader
	if path := adv.site.History.SiteIndexPath(); path != "" {
		if r, err := w.opt.OpenIndex(path); err == nil {
			defer r.Close()
			site = append(site, r)
		} else if adv.warning == "" {
			adv.warning = fmt.Sprintf("the site's advice index is not readable, so only your runs are used: %v", err)
			if errors.Is(err, fs.ErrNotExist) {
				adv.warning += " (the site's admins publish it: migadvisor collect --publish DIR)"
			}
		}
	}
	runs, err = index.ScriptRuns(advisor.KeyOf(file, adv.script, adv.site, w.user()), own, site...)
	if err != nil || len(runs) == 0 || !advisor.NeedsPrior(runs) {
		return runs, nil, false, err // measured on two profiles: no prior, no peers to read
	}
	set, err := index.ReadPeers(own, site...)
	if err != nil && adv.warning == "" {
		adv.warning = fmt.Sprintf("the advice goes on without other scripts' runtimes: %v", err)
	}
	return runs, set.Except(adv.script.Fingerprint()), true, nil
}
