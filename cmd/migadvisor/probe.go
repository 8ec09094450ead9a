package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/outcome"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// probeFlags are recommend's flags for measuring before advising. Their
// names are sweep's and wait's, whose steps the probe runs.
func probeFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.BoolFlag{Name: "probe", Usage: "measure first: sweep, submit, wait, collect, then recommend. It submits a job per profile, a whole GPU included, each charged SU for as long as it runs, up to its --time: it says the most that can cost before the first job"},
		&cli.BoolFlag{Name: "ladder", Usage: "with --probe: one profile at a time from the smallest, until one completes without an OOM"},
		&cli.StringFlag{Name: "profiles", Usage: "with --probe: comma-separated profiles (default: all of the site's)"},
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "with --probe: directory for the variants (default: migadvisor-probe-JOB-TIME); the jobs' output goes where the script's --output says, from the current directory"},
		&cli.StringFlag{Name: "workload", Usage: "with --probe: tag the jobs with a workload name"},
		asOneGPUFlag("with --probe: "),
		timeFlag("with --probe: "),
		noPreallocFlag("with --probe: "),
	}, append(measureFlags("with --probe: "), emulateFlags("with --probe: ")...)...)
}

// measureFlags are the flags of the measuring loop (submit, wait, collect)
// that recommend --probe and benchmark run share; prefix begins each usage.
func measureFlags(prefix string) []cli.Flag {
	return append(waitFlags(prefix),
		&cli.BoolFlag{Name: "no-monitor", Usage: prefix + "variants without the GPU memory monitor"},
		monitorBinFlag(prefix+"the monitor binary the jobs run (default: migadvisor-monitor beside this binary, else this binary)"),
		&cli.StringSliceFlag{Name: "outputs", Usage: prefix + "directory with job output files (repeatable)"},
		clusterFlag(),
		slurmBinFlag(),
	)
}

// measureOptions are measureFlags' values.
type measureOptions struct {
	wait    bench.WaitOptions
	monitor *slurm.MonitorWrap // nil: --no-monitor
	outputs []string
}

func measureOptionsFrom(c *cli.Context) (measureOptions, error) {
	wait, err := waitTimingFrom(c)
	return measureOptions{wait: wait, monitor: monitorWrapFrom(c), outputs: c.StringSlice("outputs")}, err
}

// probeOptions are probeFlags' values.
type probeOptions struct {
	enabled  bool // --probe
	ladder   bool
	profiles []string // as given; none: the site's
	out      string   // "": bench.DefaultProbeDir
	workload string
	asOneGPU bool
	// noPrealloc: variants turn preallocation off, so the peak is the need.
	noPrealloc bool
	time       string // every variant's --time; "": the script's
	measure    measureOptions
	emulate    *slurm.EmulateWrap // nil: a job per profile
	budget     time.Duration      // each emulated run's
}

func probeOptionsFrom(c *cli.Context) (probeOptions, error) {
	measure, err := measureOptionsFrom(c)
	if err != nil {
		return probeOptions{}, err
	}
	opt := probeOptions{enabled: c.Bool("probe"), ladder: c.Bool("ladder"), profiles: splitList(c.String("profiles")),
		out: c.String("out"), workload: c.String("workload"), asOneGPU: c.Bool("as-one-gpu"), measure: measure,
		noPrealloc: c.Bool("no-prealloc")}
	if c.IsSet("time") && !opt.enabled {
		return opt, usageError{"--time sets the probe's variants: use it with --probe (the change to make shows the script's --time)"}
	}
	if opt.time, err = variantTime(c.String("time")); err != nil {
		return opt, err
	}
	if opt.emulate, opt.budget, err = emulateFrom(c, globalFlagsFrom(c)); err != nil {
		return opt, err
	}
	switch {
	case opt.emulate != nil && !opt.enabled:
		return opt, usageError{"--emulate measures: use it with --probe"}
	case opt.emulate != nil && opt.ladder:
		return opt, usageError{"--emulate runs every profile in one job: --ladder has nothing to climb"}
	case opt.emulate != nil:
		opt.measure.monitor = nil // emulate runs each profile under the monitor itself
	}
	return opt, nil
}

// runProbe measures the script on the chosen profiles: all at once, or as
// a ladder from the smallest (see bench.Probe). Ctrl-C stops the waiting,
// not the jobs, and says how to follow them.
func runProbe(ctx context.Context, opt probeOptions, env commandEnv, site *catalog.Site, script *slurm.Script) error {
	profiles, err := profilesFlag(site, opt.profiles)
	if err != nil {
		return err
	}
	out := opt.out
	if out == "" {
		out = bench.DefaultProbeDir(script.Path, time.Now())
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	show := &probeProgress{env: env, bar: queueBar{w: env.Err, tty: isTTY(env.Err)}}
	defer show.bar.finish()
	res, err := bench.Probe(ctx, bench.ProbeOptions{
		Sweep: bench.SweepOptions{Script: script, Site: site, Profiles: profiles, OutDir: out, Monitor: opt.measure.monitor,
			AsOneGPU: opt.asOneGPU, Time: opt.time, Emulate: opt.emulate, EmulateBudget: opt.budget, NoPrealloc: opt.noPrealloc},
		Ladder: opt.ladder, Workload: opt.workload, WorkDir: workingDir(), Wait: opt.measure.wait,
	}, measureDeps(env, opt.measure, show.event))
	show.bar.finish()
	if err != nil && res.Dir() != "" {
		return interrupted(ctx, env.Err, err, fmt.Sprintf("the probe's jobs still run in Slurm: 'migadvisor wait --sweep %s' waits for them, then 'migadvisor recommend %s' advises",
			slurm.ShellWord(res.Dir()), slurm.ShellWord(script.Path)))
	}
	return lintFailure(env.Err, err, script.Path, "fix them first")
}

// probeProgress shows a probe's steps: on a terminal as they happen (with
// wait's bar), elsewhere only what the user must know (a ladder that stops
// early, records that could not be kept or collected).
type probeProgress struct {
	env commandEnv
	bar queueBar
}

func (p *probeProgress) event(e bench.ProbeEvent) {
	switch e.Kind {
	case bench.ProbeStarting:
		fmt.Fprintln(p.env.Err, probePlanLine(e.Plan)) // off a terminal too: it says what the probe spends
	case bench.ProbeSubmitted:
		p.say("probe: %s submitted as job %s (%s)", e.Profile, e.JobID, e.File)
	case bench.ProbeQueue:
		p.bar.show(e.Queue)
	case bench.ProbeJobEnded:
		switch e.Outcome.Kind {
		case "":
			p.say("probe: job %s on %s ended %s", e.JobID, e.Profile, e.State)
		case outcome.Completed:
			p.say("probe: job %s on %s %s", e.JobID, e.Profile, e.Outcome.Text)
		default:
			p.say("probe: job %s on %s ended %s: %s", e.JobID, e.Profile, e.State, e.Outcome.Text)
		}
	case bench.ProbeNextRung:
		p.say("probe: %s did not complete cleanly; trying the next profile", e.Profile)
	case bench.ProbeStopped:
		fmt.Fprintf(p.env.Err, "migadvisor: probe stopped at %s, since a larger profile would fail the same way: job %s %s\n", e.Profile, e.JobID, e.Outcome.Text)
	case bench.ProbeWarning:
		fmt.Fprintf(p.env.Err, "migadvisor: warning: %v\n", e.Err)
	}
}

// probePlanLine says, before the first submission, what a probe submits,
// the most it can cost and where its files go.
func probePlanLine(plan *bench.ProbePlan) string {
	var names []string
	hours := map[float64]bool{}
	for _, j := range plan.Jobs {
		name := j.Profile
		if j.Whole {
			name += " (a whole GPU)"
		}
		names = append(names, name)
		hours[j.Hours] = true
	}
	if len(names) == 0 {
		names = plan.Profiles
	}
	var what string
	switch {
	case plan.Emulate:
		what = fmt.Sprintf("1 job on %s that runs the script once per profile (%s)", textutil.JoinAnd(names), textutil.JoinAnd(plan.Profiles))
	case plan.Ladder:
		what = fmt.Sprintf("up to %s, one profile at a time from the smallest: %s", textutil.Plural(len(plan.Profiles), "job"), textutil.JoinAnd(names))
	default:
		what = fmt.Sprintf("%s, one on each of %s", textutil.Plural(len(plan.Profiles), "job"), textutil.JoinAnd(names))
	}
	cost := fmt.Sprintf("each charged for as long as it runs; the cost has no bound: %s", plan.Unpriced)
	if plan.Unpriced == "" {
		limit := "each job's --time"
		if len(hours) == 1 && len(plan.Jobs) > 0 {
			limit = slurm.FormatSeconds(plan.Jobs[0].Hours*3600) + ", each job's --time"
			if plan.Jobs[0].TimeFrom != "--time" {
				limit = slurm.FormatSeconds(plan.Jobs[0].Hours*3600) + ", the partition's limit (the script has no --time)"
			}
		}
		cost = fmt.Sprintf("at most %s SU if every job runs for all of %s", advisor.FormatSU(plan.MaxSU), limit)
	}
	return fmt.Sprintf("migadvisor: probe: submitting %s; %s; variants in %s, each job's output in %s (and the monitor's summary beside it)",
		what, cost, plan.Dir, plan.Outputs)
}

// say reports a step on a terminal; pipes and scripts get only the result.
func (p *probeProgress) say(format string, args ...any) {
	if p.bar.tty {
		fmt.Fprintf(p.env.Err, format+"\n", args...)
	}
}
