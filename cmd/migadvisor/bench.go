package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/bench/workloads"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
)

// benchmarkCommand runs the reference workloads. "bench" still reaches it
// (hiddenAliases, args.go): the name it had before, in scripts and notes.
func benchmarkCommand() *cli.Command {
	return &cli.Command{
		Name:            "benchmark",
		Usage:           "run the reference benchmark suite on every profile",
		Description:     helpText("benchmark"),
		HideHelpCommand: true, // "help, h" is --help again, listed as a subcommand
		Subcommands:     []*cli.Command{benchmarkListCommand(), benchmarkWriteCommand(), benchmarkRunCommand()},
	}
}

// benchmarkListOptions are 'benchmark list' flags.
type benchmarkListOptions struct {
	Suite suiteChoice
	JSON  bool
}

func benchmarkListOptionsFrom(c *cli.Context) (benchmarkListOptions, error) {
	if err := benchmarkNoArgs(c); err != nil {
		return benchmarkListOptions{}, err
	}
	suite, err := suiteChoiceFrom(c)
	return benchmarkListOptions{Suite: suite, JSON: c.Bool("json")}, err
}

func benchmarkListCommand() *cli.Command {
	return &cli.Command{
		Name:        "list",
		Usage:       "list the suite's workloads and the software each needs",
		Description: helpText("benchmark-list"),
		Flags:       append(suiteFlags(), jsonFlag()),
		Action:      bindAction(benchmarkListOptionsFrom, runBenchmarkList),
	}
}

func runBenchmarkList(_ context.Context, o benchmarkListOptions, w outWriters) error {
	ws, suite := o.Suite.Workloads, o.Suite.Suite
	if o.JSON {
		return writeJSON(w.Out, map[string]any{"suite": suite.Name, "title": suite.Title, "workloads": ws})
	}
	return workloads.WriteList(w.Out, ws)
}

// benchmarkNoArgs refuses arguments to the benchmark commands, which
// select workloads by --workloads: 'benchmark run NAME' submitted the whole
// suite. Arguments that are workloads' names are shown as --workloads.
func benchmarkNoArgs(c *cli.Context) error {
	err := noArgs(c)
	if err == nil {
		return nil
	}
	suite, lookupErr := workloads.LookupSuite(c.String("suite"))
	if lookupErr != nil {
		return err
	}
	for _, a := range c.Args().Slice() {
		if _, ok := suite.Workload(workloads.BaseName(a)); !ok {
			return err // not one of the suite's: --workloads would refuse it too
		}
	}
	return usageError{fmt.Sprintf("%s: select workloads with --workloads %s", err, strings.Join(c.Args().Slice(), ","))}
}

// benchmarkWriteOptions are 'benchmark write' flags.
type benchmarkWriteOptions struct {
	Global globalFlags
	Suite  suiteChoice
	Render workloads.RenderOptions // Dir: the suite's directory
	JSON   bool
}

func benchmarkWriteOptionsFrom(c *cli.Context) (benchmarkWriteOptions, error) {
	if err := benchmarkNoArgs(c); err != nil {
		return benchmarkWriteOptions{}, err
	}
	suite, err := suiteChoiceFrom(c)
	if err != nil {
		return benchmarkWriteOptions{}, err
	}
	return benchmarkWriteOptions{Global: globalFlagsFrom(c), Suite: suite, Render: renderOptionsFrom(c, suite.Suite, time.Now()),
		JSON: c.Bool("json")}, nil
}

func benchmarkWriteCommand() *cli.Command {
	return &cli.Command{
		Name:        "write",
		Usage:       "write the workloads' job scripts and programs, without submitting",
		Description: helpText("benchmark-write"),
		Flags:       append(append(suiteFlags(), renderFlags()...), jsonFlag()),
		Action:      bindAction(benchmarkWriteOptionsFrom, runBenchmarkWrite),
	}
}

func runBenchmarkWrite(_ context.Context, o benchmarkWriteOptions, w outWriters) error {
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	written, err := bench.RenderSuite(site, o.Suite.Workloads, o.Render)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(w.Out, written)
	}
	for _, wl := range written {
		fmt.Fprintln(w.Out, wl.Job)
	}
	return nil
}

func benchmarkRunCommand() *cli.Command {
	return &cli.Command{
		Name:        "run",
		Usage:       "sweep the suite's workloads over the profiles: write, submit, wait, collect",
		Description: helpText("benchmark-run"),
		Flags: append(append(append(suiteFlags(), renderFlags()...),
			&cli.StringFlag{Name: "profiles", Usage: "comma-separated profiles, by name or GRES type (default: all of the site's)"},
			&cli.BoolFlag{Name: "no-wait", Usage: "submit and return; 'migadvisor wait' and 'collect' later"},
			jsonFlag(),
		), measureFlags("")...),
		Action: bindAction(benchmarkRunOptionsFrom, runBenchmark),
	}
}

// benchmarkRunOptions are 'benchmark run' flags.
type benchmarkRunOptions struct {
	Global globalFlags
	Slurm  slurmFlags
	// Suite is bench.RunSuite's but the site and where sbatch runs: the
	// workloads, how they are written (Render.Dir: the suite's directory),
	// the profiles by name or GRES type (none: all of the site's).
	Suite   bench.SuiteOptions
	JSON    bool
	Measure measureOptions // the monitor, --timeout, --poll, --outputs: as sweep, wait and the probe read them
}

// addsRuns: a benchmark run submits, waits and collects its jobs.
func (o benchmarkRunOptions) addsRuns() bool { return true }

func benchmarkRunOptionsFrom(c *cli.Context) (benchmarkRunOptions, error) {
	if err := benchmarkNoArgs(c); err != nil {
		return benchmarkRunOptions{}, err
	}
	suite, err := suiteChoiceFrom(c)
	if err != nil {
		return benchmarkRunOptions{}, err
	}
	measure, err := measureOptionsFrom(c)
	return benchmarkRunOptions{Global: globalFlagsFrom(c), Slurm: slurmFlagsFrom(c), JSON: c.Bool("json"), Measure: measure,
		Suite: bench.SuiteOptions{Workloads: suite.Workloads, Render: renderOptionsFrom(c, suite.Suite, time.Now()),
			Profiles: splitList(c.String("profiles")), Monitor: measure.monitor, NoWait: c.Bool("no-wait"), Wait: measure.wait}}, err
}

func runBenchmark(ctx context.Context, o benchmarkRunOptions, w outWriters) error {
	env := newEnv(o.Global, o.Slurm, w)
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	show := &suiteProgress{env: env, bar: queueBar{w: env.Err, tty: isTTY(env.Err)}}
	defer show.bar.finish()
	run := o.Suite
	run.Site, run.WorkDir = site, workingDir()
	res, err := bench.RunSuite(ctx, run, measureDeps(env, o.Measure, show.event))
	show.bar.finish()
	if err != nil {
		return suiteStopped(ctx, env, res, suiteFailure(env.Err, w.Out, o.JSON, res, err))
	}
	if err := printBenchmarkJobs(w.Out, o.JSON, res.Jobs); err != nil {
		return err
	}
	if isTTY(w.Out) && !o.JSON {
		next := "migadvisor docs --out docs/"
		if o.Suite.NoWait {
			next = "migadvisor wait && " + next
		}
		fmt.Fprintln(w.Out, "\nnext: "+next)
	}
	return nil
}

// suiteFailure is a suite's error for the user: an unknown profile is a
// usage error (nothing was written); else the jobs submitted are listed
// first, and lint errors a workload's script should never have are shown.
func suiteFailure(stderr, out io.Writer, asJSON bool, res bench.SuiteResult, err error) error {
	var unknown *catalog.UnknownProfileError
	if errors.As(err, &unknown) {
		return usageError{"--profiles: " + err.Error()}
	}
	var failed *bench.SuiteError
	if errors.As(err, &failed) {
		err = fmt.Errorf("workload %s: %w", failed.Workload,
			lintFailure(stderr, failed.Err, failed.Script, "the workload's script should not have any; report it"))
	}
	printBenchmarkJobs(out, asJSON, res.Jobs)
	return err
}

// suiteStopped is the error of a suite that stopped waiting for jobs it
// had submitted (Ctrl-C, --timeout, squeue failing): they run on and are
// charged, so it says so and how to take them up, as a probe does.
func suiteStopped(ctx context.Context, env commandEnv, res bench.SuiteResult, err error) error {
	submitted := 0
	for _, j := range res.Jobs {
		if j.JobID != "" {
			submitted++
		}
	}
	if submitted == 0 {
		return err
	}
	takeUp := "'migadvisor wait' waits for them and collects their records, then 'migadvisor docs --out docs/' writes the pages"
	if ctx.Err() == nil && bench.StoppedWaiting(err) {
		return fmt.Errorf("%w; the suite's %s, submitted, still run in Slurm, charged as they run: %s",
			err, textutil.Plural(submitted, "job"), takeUp)
	}
	return interrupted(ctx, env.Err, err, "the suite's jobs still run in Slurm: "+takeUp)
}

// suiteProgress shows a suite's steps, on a terminal or not (a run takes
// minutes at least): what it is about to do, each job submitted, and as
// jobs end wait's bar on a terminal, elsewhere a line each time some end;
// and the records that could not be kept.
type suiteProgress struct {
	env  commandEnv
	bar  queueBar
	done int // jobs seen ended, off a terminal
}

func (p *suiteProgress) event(e bench.ProbeEvent) {
	if e.Kind == bench.ProbeQueue {
		p.bar.show(e.Queue)
		if p.bar.tty || e.Queue.Done <= p.done {
			return // off a terminal, a line each time some end
		}
		p.done = e.Queue.Done
	}
	if line := bench.SuiteEventLine(e); line != "" {
		fmt.Fprintln(p.env.Err, line)
	}
}

func printBenchmarkJobs(out io.Writer, asJSON bool, suiteJobs []bench.SuiteJob) error {
	if asJSON {
		return writeJSON(out, append([]bench.SuiteJob{}, suiteJobs...)) // never null
	}
	return bench.WriteSuiteJobs(out, suiteJobs)
}
