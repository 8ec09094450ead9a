package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/bench/workloads"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// benchmarkCommand runs the reference workloads. "bench" still reaches it
// (hiddenAliases, args.go): the name it had before, in scripts and notes.
func benchmarkCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:            "benchmark",
		Usage:           "run the reference benchmark suite on every profile",
		Description:     helpText("benchmark"),
		HideHelpCommand: true, // "help, h" is --help again, listed as a subcommand
		Subcommands:     []*cli.Command{benchmarkListCommand(), benchmarkWriteCommand(), benchmarkRunCommand()},
	})
}

// benchmarkListOptions are 'benchmark list' flags.
type benchmarkListOptions struct {
	Suite suiteChoice
	JSON  bool
}

func benchmarkListOptionsFrom(c *cli.Context) (benchmarkListOptions, error) {
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
	t := newTable(w.Out)
	fmt.Fprintln(t, "WORKLOAD\tTITLE\tNEEDS")
	for _, wl := range ws {
		fmt.Fprintf(t, "%s\t%s\t%s\n", wl.Name, wl.Title, wl.Needs)
	}
	return t.Flush()
}

// benchmarkWriteOptions are 'benchmark write' flags.
type benchmarkWriteOptions struct {
	Global globalFlags
	Suite  suiteChoice
	Render workloads.RenderOptions // Dir: the suite's directory
	JSON   bool
}

func benchmarkWriteOptionsFrom(c *cli.Context) (benchmarkWriteOptions, error) {
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

// writtenWorkload is a workload 'benchmark write' wrote.
type writtenWorkload struct {
	Workload string `json:"workload"`
	Tag      string `json:"tag"`
	Job      string `json:"job"`
}

func runBenchmarkWrite(_ context.Context, o benchmarkWriteOptions, w outWriters) error {
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	var all []writtenWorkload
	for _, wl := range o.Suite.Workloads {
		job, tag, err := bench.RenderWorkload(site, wl, o.Render)
		if err != nil {
			return err
		}
		all = append(all, writtenWorkload{wl.Name, tag, job})
	}
	if o.JSON {
		return writeJSON(w.Out, all)
	}
	for _, wl := range all {
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
	Global   globalFlags
	Slurm    slurmFlags
	Suite    suiteChoice
	Render   workloads.RenderOptions // Dir: the suite's directory
	Profiles []string                // by name or GRES type; none: all of the site's
	NoWait   bool
	JSON     bool
	Measure  measureOptions // the monitor, --timeout, --poll, --outputs: as sweep, wait and the probe read them
}

// addsRuns: a benchmark run submits, waits and collects its jobs.
func (o benchmarkRunOptions) addsRuns() bool { return true }

func benchmarkRunOptionsFrom(c *cli.Context) (benchmarkRunOptions, error) {
	suite, err := suiteChoiceFrom(c)
	if err != nil {
		return benchmarkRunOptions{}, err
	}
	measure, err := measureOptionsFrom(c)
	if err != nil {
		return benchmarkRunOptions{}, err
	}
	return benchmarkRunOptions{Global: globalFlagsFrom(c), Slurm: slurmFlagsFrom(c), Suite: suite,
		Render: renderOptionsFrom(c, suite.Suite, time.Now()), Profiles: splitList(c.String("profiles")),
		NoWait: c.Bool("no-wait"), JSON: c.Bool("json"), Measure: measure}, nil
}

// benchmarkJob is one submitted variant of a workload.
type benchmarkJob struct {
	Workload string `json:"workload"` // the tag
	Profile  string `json:"profile"`
	JobID    string `json:"job_id"`
	Script   string `json:"script"`
	State    string `json:"state,omitempty"`
}

func runBenchmark(ctx context.Context, o benchmarkRunOptions, w outWriters) error {
	env := newEnv(o.Global, o.Slurm, w)
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	show := &suiteProgress{env: env, bar: queueBar{w: env.Err, tty: isTTY(env.Err)}}
	defer show.bar.finish()
	res, err := bench.RunSuite(ctx, bench.SuiteOptions{Site: site, Workloads: o.Suite.Workloads, Render: o.Render,
		Profiles: o.Profiles, Monitor: o.Measure.monitor, NoWait: o.NoWait, Wait: o.Measure.wait, WorkDir: workingDir(),
	}, measureDeps(env, o.Measure, show.event))
	show.bar.finish()
	if err != nil {
		return suiteFailure(env.Err, w.Out, o.JSON, res, err)
	}
	if err := printBenchmarkJobs(w.Out, o.JSON, res.Jobs); err != nil {
		return err
	}
	if isTTY(w.Out) && !o.JSON {
		next := "migadvisor docs --out docs/"
		if o.NoWait {
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
		err = fmt.Errorf("workload %s: %w", failed.Workload, lintFailure(stderr, failed.Err, failed.Script, "the workload's script should not have any; report it"))
	}
	printBenchmarkJobs(out, asJSON, res.Jobs)
	return err
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
	switch e.Kind {
	case bench.SuiteStarting:
		fmt.Fprintln(p.env.Err, suitePlanLine(e.Suite))
	case bench.ProbeSubmitted:
		fmt.Fprintf(p.env.Err, "benchmark: %s on %s submitted as job %s\n", e.Workload, e.Profile, e.JobID)
	case bench.ProbeQueue:
		if !p.bar.tty && e.Queue.Done > p.done {
			p.done = e.Queue.Done
			fmt.Fprintf(p.env.Err, "benchmark: %d of %s ended (%d running, %d pending)\n", e.Queue.Done, textutil.Plural(e.Queue.Total, "job"),
				e.Queue.Running, e.Queue.Pending)
		}
		p.bar.show(e.Queue)
	case bench.ProbeWarning:
		fmt.Fprintf(p.env.Err, "migadvisor: warning: %v\n", e.Err)
	}
}

// suitePlanLine says, before the first job, what a benchmark run submits
// and how long it can take.
func suitePlanLine(plan *bench.SuitePlan) string {
	kind := "runs"
	switch {
	case plan.Quick && plan.Synthetic:
		kind = "quick runs on random data that check the setup"
	case plan.Quick:
		kind = "quick runs that check the setup"
	case plan.Synthetic:
		kind = "runs on random data"
	}
	long := ""
	if plan.Longest > 0 {
		long = ", the longest " + slurm.FormatDuration(plan.Longest)
	}
	then := "then returns: 'migadvisor wait' follows them"
	if plan.Wait {
		then = fmt.Sprintf("then waits until every job has ended, each after its wait in the queue and at most its --time%s, and collects them; "+
			"a line follows each job submitted and each that ends", long)
	}
	return fmt.Sprintf("benchmark: submitting %s (%s on %s, %s) from %s, %s",
		textutil.Plural(plan.Jobs, "job"), textutil.Plural(plan.Workloads, "workload"), textutil.JoinAnd(plan.Profiles), kind, plan.Dir, then)
}

func printBenchmarkJobs(out io.Writer, asJSON bool, suiteJobs []bench.SuiteJob) error {
	jobs := make([]benchmarkJob, len(suiteJobs)) // never null in JSON
	for i, j := range suiteJobs {
		jobs[i] = benchmarkJob(j) // the same fields: a field bench adds needs a place in the JSON first
	}
	if asJSON {
		return writeJSON(out, jobs)
	}
	t := newTable(out)
	fmt.Fprintln(t, "WORKLOAD\tPROFILE\tJOB ID\tSTATE\tSCRIPT")
	for _, j := range jobs {
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\n", j.Workload, j.Profile, j.JobID, orDash(j.State), j.Script)
	}
	return t.Flush()
}
