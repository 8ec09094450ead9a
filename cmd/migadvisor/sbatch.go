package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/fsutil"
	"github.com/migadvisor/migadvisor/slurm"
)

const sbatchHelp = `Runs Slurm's sbatch with the arguments, standard input and output it was
given, and exits with sbatch's status. Installed as "sbatch" on login nodes
(the scripts/sbatch shim, or a link named sbatch), "sbatch --help" is Slurm's
own help.

Before sbatch runs, when the history (your own, and the site's if the site
file names one in [history] site_db) shows a cheaper profile that is safe for
this script, or a safe one instead of a profile it ran out of memory on, it
says so on stderr with the change to make, and prints the script's lint
errors and what the job will not get as its script reads (an #SBATCH line
sbatch ignores, more GPU processes than GPUs). Nothing when there is
nothing useful to say.

  --mig-apply, MIGADVISOR_APPLY=1   submit with the advice's change (the GPU
                                    request, and --partition, --time or --mem
                                    where it needs others), shown on stderr

After sbatch it records the job (id, script fingerprint, profile asked for)
in the history's spool, which any migadvisor command moves into the history,
so 'migadvisor collect' gathers its evidence later.

Nothing it does can stop the submission: advice has a 150 ms deadline and
any problem (a locked, corrupt or missing history, a bad site file, a slow
file system) skips it with at most one line on stderr, none with
MIGADVISOR_QUIET=1. MIGADVISOR_DISABLE=1 makes it a pure, silent
pass-through.

The real sbatch is $MIGADVISOR_SBATCH, else the first sbatch on PATH that is
neither migadvisor nor the shim that started it.

Examples:
   migadvisor sbatch job.sh
   migadvisor sbatch --mig-apply job.sh --epochs 3
   MIGADVISOR_APPLY=1 sbatch job.sh            # with the shim first on PATH
   migadvisor sbatch --parsable -p gpu --gres=gpu:a100_20g:1 job.sh

Exit status: sbatch's own; 127 when no sbatch can be found.`

func sbatchCommand() *cli.Command {
	return &cli.Command{
		Name:            "sbatch",
		Usage:           "submit through Slurm's sbatch with advice at submission, and record the job in the history",
		ArgsUsage:       "[SBATCH OPTIONS...] [JOB.sh [ARGS...]]",
		Description:     sbatchHelp,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
				fmt.Fprintf(c.App.Writer, "migadvisor sbatch %s\n\n%s\n", c.Command.ArgsUsage, sbatchHelp)
				return nil
			}
			return silentExit(wrapSbatch(c.Context, args, os.Stdin, c.App.Writer, c.App.ErrWriter, os.Environ()))
		},
	}
}

// The wrapper's deadlines: advice before sbatch runs, and the record after it
// has answered. Past one, that step is skipped. Writing the record to the
// spool gets longer than moving it into the database, because a record not
// spooled is lost, and a submission is not held up by it: sbatch has
// answered and its output is out.
const (
	adviceDeadline = 150 * time.Millisecond
	spoolDeadline  = 2 * time.Second
	recordDeadline = 150 * time.Millisecond
	// recordBusyTimeout is how long the record waits for another process's
	// write lock; the submission is safe in the spool by then.
	recordBusyTimeout = 50 * time.Millisecond
	// spoolBacklog is how many spooled records make the wrapper move them
	// into the history itself (a few milliseconds, so not every time).
	spoolBacklog = 32
)

// applyFlag is the wrapper's own option; sbatch never sees it.
const applyFlag = "--mig-apply"

// wrapper is one run of the sbatch wrapper, with the process's environment.
type wrapper struct {
	env    []string
	stderr io.Writer
	warned bool
}

func (w *wrapper) getenv(name string) string {
	for i := len(w.env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(w.env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// warn prints the one line a submission may get about what went wrong in
// the wrapper; later problems of the same submission stay silent.
func (w *wrapper) warn(format string, args ...any) {
	if !w.warned && w.getenv("MIGADVISOR_QUIET") != "1" {
		fmt.Fprintf(w.stderr, "migadvisor: "+format+"\n", args...)
	}
	w.warned = true
}

// wrapSbatch is the wrapper: advice, then sbatch with the user's arguments
// (or, asked to apply the advice, with its one change), then the record.
func wrapSbatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	w := &wrapper{env: env, stderr: stderr}
	args, apply := takeApplyFlag(args)
	apply = apply || w.getenv("MIGADVISOR_APPLY") == "1"
	self, _ := os.Executable()
	real, err := slurm.FindRealSbatch(w.getenv, self)
	if err != nil {
		fmt.Fprintf(stderr, "migadvisor: %v\n", err)
		return 127
	}
	// The shim's note to this process is not the job's business: sbatch
	// would export it into the job's environment.
	os.Unsetenv(slurm.ShimEnv)
	disabled := w.getenv("MIGADVISOR_DISABLE") == "1"
	var read *submissionAdvice // what the advice step read, for the record
	if !disabled {
		args, read = w.adviseWithin(ctx, adviceDeadline, args, apply)
	}
	status, out, err := slurm.RunSbatch(real, args, stdin, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "migadvisor: %v\n", err)
		return status
	}
	if status != 0 || disabled {
		return status
	}
	if err := w.record(ctx, read, args, out); err != nil {
		w.warn("the job is submitted but not in the history: %v", err)
	}
	return status
}

// takeApplyFlag removes --mig-apply from among sbatch's options (after the
// script it is the script's own argument, and stays).
func takeApplyFlag(args []string) ([]string, bool) {
	cl := slurm.ParseCommandLine(args)
	end := len(args)
	if cl.ScriptIndex >= 0 {
		end = cl.ScriptIndex
	}
	for i := 0; i < end; i++ {
		if args[i] == applyFlag && !isOptionValue(cl, i) {
			return append(slices.Clone(args[:i]), args[i+1:]...), true
		}
	}
	return args, false
}

// isOptionValue reports whether args[i] is the value word of an option ("-J --mig-apply").
func isOptionValue(cl *slurm.CommandLine, i int) bool {
	for _, o := range cl.Options {
		if o.Start < i && i < o.End {
			return true
		}
	}
	return false
}

// runWithin runs f with a deadline and gives up waiting for it after d: a
// slow file system or a locked database must not hold up a submission.
func runWithin[T any](ctx context.Context, d time.Duration, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f(ctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("gave up after %v", d)
	}
}

// adviseWithin prints the advice for the submission and returns the
// arguments to run sbatch with (the user's, or with apply the advice's) and
// what the advice step read, nil when it ran out of time.
func (w *wrapper) adviseWithin(ctx context.Context, d time.Duration, args []string, apply bool) ([]string, *submissionAdvice) {
	adv, err := runWithin(ctx, d, func(ctx context.Context) (*submissionAdvice, error) {
		return w.advise(ctx, args)
	})
	if err != nil {
		w.warn("no advice this time: %v", err)
		return args, adv
	}
	for _, line := range adv.lint {
		fmt.Fprintf(w.stderr, "migadvisor: %s\n", line)
	}
	a := adv.advice
	switch {
	case a == nil:
		return args, adv
	case len(a.Settings) == 0: // a warning with nothing to change
		fmt.Fprintf(w.stderr, "migadvisor: %s.\n", a.Message)
		return args, adv
	case !apply:
		fmt.Fprintf(w.stderr, "migadvisor: %s. Use %s, or resubmit with MIGADVISOR_APPLY=1.\n", a.Message, a.Use())
		return args, adv
	}
	var changes []string
	for _, s := range a.Settings {
		changes = append(changes, s.Before()+" -> "+slurm.ShellWord(s.String()))
	}
	fmt.Fprintf(w.stderr, "migadvisor: %s.\nmigadvisor: submitting on %s: %s\n", a.Message, a.Profile, strings.Join(changes, ", "))
	return adv.cl.WithSettings(a.Settings), adv
}

// submissionAdvice is what the advice step found.
type submissionAdvice struct {
	site   *catalog.Site
	script *slurm.Script // nil when there is no script file
	cl     *slurm.CommandLine
	lint   []string // what sbatch or the site would reject
	advice *advisor.SubmitAdvice
}

// advise judges the job from the user's history and the site's.
func (w *wrapper) advise(ctx context.Context, args []string) (*submissionAdvice, error) {
	adv := &submissionAdvice{cl: slurm.ParseCommandLine(args)}
	path := adv.cl.Script()
	if path == "" {
		return adv, nil // --wrap or stdin: no file to fingerprint
	}
	script, err := slurm.ReadScript(path)
	if errors.Is(err, fs.ErrNotExist) {
		return adv, nil // sbatch says so itself
	}
	if err != nil {
		return nil, err
	}
	adv.script = script
	site, err := catalog.Resolve(w.getenv("MIGADVISOR_SITE"))
	if err != nil {
		return adv, err
	}
	adv.site = site
	adv.lint = lintFindings(script, site, path, advisor.LintOptions{SubmitDir: workingDir(), CommandLine: adv.cl, Env: w.env})
	key := advisor.KeyOf(path, script, site)
	own, err := w.runsFrom(ctx, key, w.dbPath(), false)
	if err != nil {
		return adv, err
	}
	siteRuns, err := w.runsFrom(ctx, key, site.History.SiteDB, true)
	if err != nil {
		return adv, err
	}
	runs := advisor.MergeRuns(own, siteRuns)
	if len(runs) == 0 {
		return adv, nil
	}
	job := advisor.Job{Script: path, Fingerprint: script.Fingerprint(), Resources: adv.cl.Resources(script, w.env),
		Runs: runs, QueueWaitS: map[string]float64{}}
	rec, err := advisor.Recommend(site, job, advisor.Options{})
	if err != nil {
		return adv, err
	}
	adv.advice, err = advisor.ForSubmission(site, rec, adv.cl, script, w.env)
	return adv, err
}

// runsFrom reads the script's runs, and its earlier versions', from a
// history, read-only: none when db is "" (no site-wide history) or, for the
// user's own, does not exist yet. siteWide (the site's history) counts only
// this user's jobs as earlier versions.
func (w *wrapper) runsFrom(ctx context.Context, key advisor.ScriptKey, db string, siteWide bool) ([]advisor.Run, error) {
	if db == "" {
		return nil, nil
	}
	st, err := history.OpenWith(ctx, db, history.Options{ReadOnly: true})
	if errors.Is(err, fs.ErrNotExist) && !siteWide {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if siteWide {
		return advisor.GatherScriptRuns(ctx, key, nil, st)
	}
	return advisor.GatherScriptRuns(ctx, key, st)
}

func (w *wrapper) dbPath() string {
	if db := w.getenv("MIGADVISOR_DB"); db != "" {
		return db
	}
	return defaultDBPath()
}

// record links the job sbatch printed to the script's fingerprint by
// putting it in the history's spool: a small file, which no database lock
// can hold up (within spoolDeadline). Any migadvisor command that opens the
// history moves the spool in first, so collect, status and recommend see
// every submission; the wrapper moves it in itself only when it has grown
// to spoolBacklog records (someone who submits a lot and runs nothing
// else), and only if the write lock comes free within recordDeadline.
func (w *wrapper) record(ctx context.Context, read *submissionAdvice, args []string, out []byte) error {
	spool := history.SpoolFor(w.dbPath())
	spooled, err := runWithin(ctx, spoolDeadline, func(context.Context) (bool, error) {
		sub, ok, err := w.submission(read, args, out)
		if err != nil || !ok {
			return false, err
		}
		_, err = spool.Put(sub)
		return err == nil, err
	})
	if err != nil || !spooled {
		return err
	}
	if pending, err := spool.Pending(); err != nil || len(pending) < spoolBacklog {
		return nil
	}
	_, _ = runWithin(ctx, recordDeadline, func(ctx context.Context) (struct{}, error) {
		st, err := history.OpenWith(ctx, w.dbPath(), history.Options{BusyTimeout: recordBusyTimeout})
		if err == nil {
			st.Close()
		}
		return struct{}{}, err
	})
	return nil
}

// submission is what the history keeps of the job sbatch accepted; false
// when nothing was submitted (--test-only) or there is no file to
// fingerprint (--wrap, stdin). The script and site the advice step read
// are used again (applying advice changes the command line, never the
// script); the profile asked for is known when it read the site (collect
// takes it from accounting anyway).
func (w *wrapper) submission(read *submissionAdvice, args []string, out []byte) (history.Submission, bool, error) {
	id, cluster := slurm.SubmittedJobID(out)
	cl := slurm.ParseCommandLine(args)
	if id == "" || cl.Script() == "" || cl.Has("test-only") {
		return history.Submission{}, false, nil
	}
	var script *slurm.Script
	var site *catalog.Site
	if read != nil {
		script, site = read.script, read.site
	}
	if script == nil {
		var err error
		if script, err = slurm.ReadScript(cl.Script()); err != nil {
			return history.Submission{}, false, err
		}
	}
	source := fsutil.Abs(cl.Script())
	sub := history.Submission{Cluster: cluster, JobID: id, Fingerprint: script.Fingerprint(), Source: source,
		Script: source, WorkDir: workingDir(), Submitted: time.Now()}
	if site != nil {
		if types := cl.Resources(script, w.env).GPUTypes(); len(types) > 0 {
			if p, ok := site.ProfileForType(types[0]); ok {
				sub.Profile = p.Name
			}
		}
	}
	if sub.Cluster == "" {
		sub.Cluster = w.getenv("MIGADVISOR_CLUSTER")
	}
	return sub, true, nil
}

// isSbatchName reports whether the program was started as "sbatch" (a link
// or copy of migadvisor installed in its place).
func isSbatchName(argv0 string) bool {
	return filepath.Base(argv0) == "sbatch"
}
