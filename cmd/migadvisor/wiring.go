package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/app/wrapper"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// The conventions of a command here: its flags are read once, into an
// options struct, by one xxxOptionsFrom that also validates them; the
// command's work takes the options, a context and the writers, never the
// *cli.Context. bindAction joins the two.

// outWriters are where a command writes: data on Out, notes and errors on Err.
type outWriters struct {
	Out, Err io.Writer
}

func writersOf(c *cli.Context) outWriters { return outWriters{Out: c.App.Writer, Err: c.App.ErrWriter} }

// bindAction is a command's Action: its options read once, then the work.
func bindAction[O any](from func(*cli.Context) (O, error), work func(context.Context, O, outWriters) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		o, err := from(c)
		if err != nil {
			return err
		}
		err = work(c.Context, o, writersOf(c))
		if r, ok := any(o).(runAdder); ok && err == nil && r.addsRuns() {
			refreshOwnIndex(c.Context, dbPath(c), writersOf(c).Err)
		}
		return err
	}
}

// runAdder is a command's options that say whether it may have added runs
// to the user's history, so that their advice index needs rewriting (not
// recommend or status, which only read and must stay fast; not a collect
// of a site-wide history, whose index is the published one and would cost
// the collect tens of seconds). The options decide, not the command's name.
type runAdder interface{ addsRuns() bool }

// refreshOwnIndex rebuilds the user's advice index, which the sbatch
// wrapper reads instead of the history, when the history changed, and the
// sbatch filter's cache of answers anew of it. A history readable by all
// is a site-wide one: it is published ('collect --publish'), not indexed
// here. A failure is one line: the command did what it was asked.
func refreshOwnIndex(ctx context.Context, db string, stderr io.Writer) {
	if info, err := os.Stat(db); err != nil || info.Mode().Perm()&0o004 != 0 {
		return
	}
	if _, err := wrapper.RefreshIndex(ctx, db); err != nil {
		fmt.Fprintf(stderr, "migadvisor: the advice index the sbatch wrapper reads is not up to date: %v\n", err)
	}
}

// globalFlags are the flags every command shares: the site and the history.
type globalFlags struct {
	Site string // --site, MIGADVISOR_SITE; "" for the lookup chain
	DB   string // --db, MIGADVISOR_DB, else the XDG default
}

func globalFlagsFrom(c *cli.Context) globalFlags {
	return globalFlags{Site: c.String("site"), DB: dbPath(c)}
}

// commandEnv is what the commands that submit and follow jobs reach
// through the flags every command shares (--db, --site, --slurm-bin,
// --cluster), and their writers.
type commandEnv struct {
	outWriters
	global globalFlags
	slurm  slurmFlags
}

func newEnv(g globalFlags, s slurmFlags, w outWriters) commandEnv {
	return commandEnv{outWriters: w, global: g, slurm: s}
}

// slurmFlagsFrom reads --slurm-bin and --cluster (for the commands that have it).
func slurmFlagsFrom(c *cli.Context) slurmFlags {
	return slurmFlags{Bin: c.String("slurm-bin"), Cluster: c.String("cluster"), Runner: depsOf(c).Slurm}
}

func (e commandEnv) site() (*catalog.Site, error) { return e.global.loadSite() }
func (e commandEnv) client() *slurm.Client        { return e.slurm.client() }

// openHistory opens the history to read: read-only where the user may not write.
func (e commandEnv) openHistory(ctx context.Context) (*history.Store, error) {
	return openHistoryToRead(ctx, e.global.DB, e.Err)
}

// openHistoryToWrite opens (creating if needed) the history to record in.
func (e commandEnv) openHistoryToWrite(ctx context.Context) (*history.Store, error) {
	st, err := history.Open(ctx, e.global.DB)
	if err == nil {
		saySetAside(st, e.Err)
	}
	return st, err
}

// saySetAside says on stderr each record of the sbatch wrapper's that
// opening st set aside: the one time it is known.
func saySetAside(st *history.Store, stderr io.Writer) {
	for _, a := range st.SetAside() {
		fmt.Fprintf(stderr, "migadvisor: %s\n", collect.SetAsideSentence(a))
	}
}

// where is what a collector is opened on (collect.Where).
func (e commandEnv) where() (collect.Where, error) {
	site, err := e.site()
	return collect.Where{Site: site, DB: e.global.DB, Slurm: e.client(), Cluster: e.slurm.Cluster}, err
}

// openCollector opens the collector with its cluster named (the wrapper's
// records carry none: they take it here); the caller closes its Store.
func (e commandEnv) openCollector(ctx context.Context) (*collect.Collector, error) {
	w, err := e.where()
	if err != nil {
		return nil, err
	}
	return collect.OpenNamed(ctx, w, e.say)
}

// say writes a sentence on stderr as the command's own.
func (e commandEnv) say(sentence string) { fmt.Fprintf(e.Err, "migadvisor: %s\n", sentence) }

// loadSite resolves the site: the flag, the user's and the system's site
// file, then the built-in default.
func (g globalFlags) loadSite() (*catalog.Site, error) { return catalog.Resolve(g.Site) }

// openHistoryToRead opens the history at path for a command that only reads
// it (history.OpenToRead). Where there is none and none can be created (a
// read-only home), the command reads nothing and says, on stderr, which
// variable points it elsewhere.
func openHistoryToRead(ctx context.Context, path string, stderr io.Writer) (*history.Store, error) {
	st, absent, err := history.OpenToRead(ctx, path)
	if err != nil {
		return nil, err
	}
	if absent != nil {
		fmt.Fprintf(stderr, "migadvisor: reading no history: %v; set MIGADVISOR_DB (or --db) to a file you may create\n", absent)
	}
	saySetAside(st, stderr)
	return st, nil
}

// slurmFlags say how a command reaches Slurm and names the cluster.
type slurmFlags struct {
	Bin     string       // --slurm-bin, MIGADVISOR_SLURM_BIN; "" for PATH
	Cluster string       // --cluster, MIGADVISOR_CLUSTER; "" to ask slurmctld
	Runner  slurm.Runner // nil: exec the commands (appDeps)
}

func (s slurmFlags) client() *slurm.Client { return &slurm.Client{Bin: s.Bin, Runner: s.Runner} }

// nonNegative refuses a negative count flag (--limit): a usage error.
func nonNegative(flag string, n int, what string) error {
	if n < 0 {
		return usageError{fmt.Sprintf("%s is %s, not %d", flag, what, n)}
	}
	return nil
}

// readHistories open the user's history to read (saying on stderr where
// there is none to read) and the site-wide one read-only.
func readHistories(stderr io.Writer) advisor.HistoryOpeners {
	return advisor.HistoryOpeners{
		Own: func(ctx context.Context, path string) (*history.Store, error) {
			return openHistoryToRead(ctx, path, stderr)
		},
		SiteWide: func(ctx context.Context, path string) (*history.Store, error) {
			return history.OpenWith(ctx, path, history.Options{ReadOnly: true})
		},
	}
}

// submitter submits through Slurm, naming the cluster as every command does.
func (e commandEnv) submitter() *collect.Submitter {
	w, _ := e.where() // the site is not needed to name the cluster
	return &collect.Submitter{Client: e.client(), Where: w, Say: e.say}
}

// perCall is the history opened for each record or read and closed after it.
func (e commandEnv) perCall() history.PerCall {
	return history.PerCall{Write: e.openHistoryToWrite, Read: e.openHistory}
}

func workingDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return wd
}

// measureDeps are how the probe and benchmark run reach Slurm, the history
// and collect, with their progress shown by show.
func measureDeps(env commandEnv, m measureOptions, show func(bench.ProbeEvent)) bench.ProbeDeps {
	return bench.ProbeDeps{
		Slurm:   env.submitter(),
		History: env.perCall(),
		Collect: func(ctx context.Context, ids []string) (bench.Ended, error) {
			return collectAndExplain(ctx, env, ids, m.outputs)
		},
		Progress: show,
	}
}

// findPending links the submissions the sbatch shim made to their jobs,
// asking again for up to patience (collect.FindSubmitted), and returns how
// many still wait, for the command to say.
func findPending(ctx context.Context, env commandEnv, patience time.Duration) (waiting int) {
	w, err := env.where()
	if err != nil {
		env.say(fmt.Sprintf("the jobs submitted through the sbatch wrapper since the last collect are not tracked yet: %v", err))
		return 0
	}
	return collect.FindSubmitted(ctx, w, patience, env.say)
}

// collectAndExplain imports the ended jobs' final records and their output
// evidence, explains how each ended, and says on stderr which ids Slurm
// has no job of and which have no final record yet.
func collectAndExplain(ctx context.Context, env commandEnv, ids, outputs []string) (bench.Ended, error) {
	col, err := env.openCollector(ctx)
	if err != nil {
		return bench.Ended{}, err
	}
	defer col.Store.Close()
	ended, err := bench.CollectEnded(ctx, col, col.Store, col.Site, ids, outputs)
	if err != nil {
		return ended, err
	}
	if len(ended.Unknown) > 0 {
		fmt.Fprintf(env.Err, "migadvisor: %s\n", collect.NoSuchJob(ended.Unknown))
	}
	for _, d := range ended.UnreadDirs {
		fmt.Fprintf(env.Err, "migadvisor: %s\n", collect.UnreadDirSentence(d))
	}
	if len(ended.Open) > 0 {
		fmt.Fprintf(env.Err, "migadvisor: accounting has no final record yet for %s; run 'migadvisor collect' later\n", textutil.JobsNamed(ended.Open, 0))
	}
	return ended, nil
}
