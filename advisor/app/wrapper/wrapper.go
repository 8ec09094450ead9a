// Package wrapper is the sbatch wrapper of login nodes. Beside Slurm's
// sbatch, which the scripts/sbatch shim runs itself (Options.Beside): the
// advice from the user's and the site's advice indexes and the lint lines
// that say what the job will not get, then the submission's record in the
// history's spool, without the job id (collect links it). In sbatch's place
// (the advice applied, or run directly): the advice, then sbatch with the
// user's arguments or the advice's change, then the record of the job id
// sbatch printed.
//
// Nothing it does can stop a submission: every step but sbatch itself fails
// open, with at most one line on stderr (none with MIGADVISOR_QUIET=1), and
// the advice has a deadline. At submission it reads advice indexes (the
// user's and the site's: advisor/app/index), never a history database, and
// writes the record to the history's spool, a file: it needs no SQLite,
// and its binary is built without cgo; only RefreshIndex, which a collect
// runs, rewrites the index from a history. Its dependencies (Slurm's
// sbatch, the indexes, the site) come in through Options, so its tests
// inject fakes.
package wrapper

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// The environment variables the wrapper reads.
const (
	EnvApply   = "MIGADVISOR_APPLY"   // "1": submit with the advice's change
	EnvQuiet   = "MIGADVISOR_QUIET"   // "1": not even the one line about a problem
	EnvDisable = "MIGADVISOR_DISABLE" // "1": a pure, silent pass-through
	EnvSite    = "MIGADVISOR_SITE"    // the site (a name or a file), as --site
	EnvDB      = "MIGADVISOR_DB"      // the user's history
	EnvCluster = "MIGADVISOR_CLUSTER" // the cluster of a job sbatch did not name one for
)

// BesideCommand is the command the shim runs the wrapper beside Slurm's
// sbatch with ("$migadvisor" sbatch-beside "$@"): Options.Beside. A command
// of its own, not a variable or an option a user could set by mistake and
// so lose a submission.
const BesideCommand = "sbatch-beside"

// ApplyFlag is the wrapper's own option; sbatch never sees it.
const ApplyFlag = "--mig-apply"

// The wrapper's deadlines: advice before sbatch runs, and the record after it
// has answered. Past one, that step is skipped. Writing the record to the
// spool gets longer, because a record not spooled is lost, and a
// submission is not held up by it: sbatch has answered and its output is
// out.
const (
	AdviceDeadline = 150 * time.Millisecond
	spoolDeadline  = 2 * time.Second
)

// Options are one run of the wrapper: the user's command line, the process's
// environment and standard streams, and what the wrapper depends on.
type Options struct {
	Args []string // sbatch's arguments as the user gave them, --mig-apply included
	// Beside: the shim runs Slurm's sbatch itself, in its own place, and
	// this beside it: the advice and a record without the job id, no sbatch.
	Beside bool
	// Env is the process's environment ("NAME=value", the last one of a
	// name wins): the wrapper's settings, SBATCH_* for the job's resources,
	// and, less the shim's note to the wrapper, sbatch's environment.
	Env     []string
	Now     func() time.Time // when the job was submitted; nil: time.Now
	WorkDir string           // where sbatch runs: relative script paths, --output directories
	// DefaultDB is the user's history when MIGADVISOR_DB is not set.
	DefaultDB string
	// User is who submits: in the site-wide history only their jobs can be
	// a script's earlier versions. "": $USER, else $LOGNAME, of Env.
	User string

	Stdin          io.Reader
	Stdout, Stderr io.Writer

	// AdviceDeadline bounds the advice step; 0 means AdviceDeadline.
	AdviceDeadline time.Duration

	Sbatch Sbatch // Slurm's sbatch; required
	// OpenIndex opens an advice index (the user's, beside their history, or
	// the site's, published); nil: index.Open. The wrapper reads no
	// history: a database on every submission costs milliseconds, and a
	// live one shared over NFS is not safe to read.
	OpenIndex func(path string) (*index.Reader, error)
	// LoadSite resolves the site from MIGADVISOR_SITE ("" for the lookup
	// chain); nil: catalog.Resolve.
	LoadSite func(choice string) (*catalog.Site, error)
}

// Run is one submission through the wrapper: advice, then sbatch with the
// user's arguments (or, asked to apply the advice, with its change), then
// the record. It returns sbatch's exit status, 127 when there is no sbatch.
func Run(ctx context.Context, opt Options) int {
	w := newWrapper(opt)
	cl, apply := userCommandLine(opt.Args)
	apply = apply || w.getenv(EnvApply) == "1"
	if opt.Beside {
		w.beside(ctx, cl)
		return 0
	}
	path, err := opt.Sbatch.Find(w.getenv)
	if err != nil {
		fmt.Fprintf(w.stderr, "migadvisor: %v\n", err)
		return 127
	}
	disabled := w.getenv(EnvDisable) == "1"
	var read *advice // what the advice step read, for the record
	if !disabled {
		if why := notApplied(cl); apply && why != "" {
			w.warn("%s", why)
		}
		cl, read = w.adviseWithin(ctx, cl, apply)
	}
	status, out, err := opt.Sbatch.Run(Command{Path: path, Args: cl.Args, Env: w.sbatchEnv(),
		Stdin: opt.Stdin, Stdout: opt.Stdout, Stderr: opt.Stderr})
	if err != nil {
		fmt.Fprintf(w.stderr, "migadvisor: %v\n", err)
		return status
	}
	if status != 0 || disabled {
		return status
	}
	// Advice not applied, and the job it was about is now sbatch's: with
	// its id known here, cancelling it is something the user can do.
	if id, cluster := slurm.SubmittedJobID(out); !apply && id != "" && read != nil && read.submit != nil && len(read.submit.Settings) > 0 {
		w.say("%s.", cancelInstead(read.submit, id, cluster))
	}
	if err := w.record(ctx, read, cl, out); err != nil {
		w.warn("the job is submitted but not in the history: %v", err)
	}
	return status
}

// wrapper is one run, with its options' gaps filled.
type wrapper struct {
	opt    Options
	stderr io.Writer
	warned bool
	// submitted is the script as sbatch read it, where beside has read it
	// first: the advice reads it no more.
	submitted *slurm.Script
	// filter: run by sbatch's cli_filter (FilterAdvise), which knows no
	// --mig-apply.
	filter bool
}

func newWrapper(opt Options) *wrapper {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.AdviceDeadline <= 0 {
		opt.AdviceDeadline = AdviceDeadline
	}
	if opt.OpenIndex == nil {
		opt.OpenIndex = index.Open
	}
	if opt.LoadSite == nil {
		opt.LoadSite = catalog.Resolve
	}
	stderr := opt.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	return &wrapper{opt: opt, stderr: stderr}
}

// getenv reads the environment as the process would: the last entry wins.
func (w *wrapper) getenv(name string) string {
	for i := len(w.opt.Env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(w.opt.Env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// sbatchEnv is the environment sbatch runs with: the process's, without the
// shim's note to the wrapper, which is not the job's business (sbatch would
// export it into the job's environment). No environment given, sbatch
// inherits the process's.
func (w *wrapper) sbatchEnv() []string {
	if w.opt.Env == nil {
		return nil
	}
	env := make([]string, 0, len(w.opt.Env))
	for _, kv := range w.opt.Env {
		if !strings.HasPrefix(kv, slurm.ShimEnv+"=") {
			env = append(env, kv)
		}
	}
	return env
}

// dbPath is the user's history: $MIGADVISOR_DB, else the default.
func (w *wrapper) dbPath() string {
	if db := w.getenv(EnvDB); db != "" {
		return db
	}
	return w.opt.DefaultDB
}

// user is who submits: Options.User, else the login's name in Env.
func (w *wrapper) user() string {
	if w.opt.User != "" {
		return w.opt.User
	}
	if u := w.getenv("USER"); u != "" {
		return u
	}
	return w.getenv("LOGNAME")
}

// warn prints the one line a submission may get about what went wrong in
// the wrapper; later problems of the same submission stay silent.
func (w *wrapper) warn(format string, args ...any) {
	if !w.warned && w.getenv(EnvQuiet) != "1" {
		fmt.Fprintf(w.stderr, "migadvisor: "+format+"\n", args...)
	}
	w.warned = true
}

// say prints a line of advice (not a problem: QUIET does not silence it).
func (w *wrapper) say(format string, args ...any) {
	fmt.Fprintf(w.stderr, "migadvisor: "+format+"\n", args...)
}

// runWithin runs f with a deadline and gives up waiting for it after d: a
// slow file system or a locked database must not hold up a submission. f
// may go on in the background after that; its result is dropped.
func runWithin[T any](ctx context.Context, d time.Duration, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		// A bug or a damaged file that makes the step panic costs the
		// step, never the submission.
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("internal error: %v", p)}
			}
		}()
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
