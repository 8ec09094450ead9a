package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// probeOnly begins the usage of the flags only a probe reads: recommend
// refuses them without --probe (probeOnlyFlagGiven).
const probeOnly = "with --probe: "

// probeFlags are recommend's flags for measuring before advising. Their
// names are sweep's and wait's, whose steps the probe runs.
func probeFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.BoolFlag{Name: "probe", Usage: "measure first: sweep, submit, wait, collect, then recommend. It submits a job per profile, a whole GPU included, each charged SU for as long as it runs, up to its --time: it says the most that can cost before the first job"},
		&cli.BoolFlag{Name: "ladder", Usage: probeOnly + "one profile at a time from the smallest, until one completes without an OOM"},
		&cli.StringFlag{Name: "profiles", Usage: probeOnly + "comma-separated profiles (default: all of the site's)"},
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: probeOnly + "directory for the variants (default: migadvisor-probe-JOB-TIME); the jobs' output goes where the script's --output says, from the current directory"},
		&cli.StringFlag{Name: "workload", Usage: probeOnly + "tag the jobs with a workload name"},
		asOneGPUFlag(probeOnly),
		timeFlag(probeOnly),
		noPreallocFlag(probeOnly),
	}, append(measureFlags(probeOnly), emulateFlags(probeOnly)...)...)
}

// probeOptions are probeFlags' values.
type probeOptions struct {
	enabled  bool // --probe
	ladder   bool
	workload string
	// sweep is every rung's sweep but the script and the site: its profiles
	// as given (none: the site's), its directory "" for bench.DefaultProbeDir.
	sweep   bench.SweepOptions
	measure measureOptions
}

func probeOptionsFrom(c *cli.Context) (probeOptions, error) {
	measure, err := measureOptionsFrom(c)
	if err != nil {
		return probeOptions{}, err
	}
	opt := probeOptions{enabled: c.Bool("probe"), ladder: c.Bool("ladder"), workload: c.String("workload"), measure: measure,
		sweep: bench.SweepOptions{Profiles: splitList(c.String("profiles")), OutDir: c.String("out"), Monitor: measure.monitor,
			AsOneGPU: c.Bool("as-one-gpu"), NoPrealloc: c.Bool("no-prealloc")}}
	sw := &opt.sweep
	if c.IsSet("time") && !opt.enabled {
		return opt, usageError{"--time sets the probe's variants: use it with --probe (the change to make shows the script's --time)"}
	}
	if sw.Time, err = variantTime(c.String("time")); err != nil {
		return opt, err
	}
	if sw.Emulate, sw.EmulateBudget, err = emulateFrom(c, globalFlagsFrom(c)); err != nil {
		return opt, err
	}
	switch {
	case sw.Emulate != nil && !opt.enabled:
		return opt, usageError{"--emulate measures: use it with --probe"}
	case sw.Emulate != nil && opt.ladder:
		return opt, usageError{"--emulate runs every profile in one job: --ladder has nothing to climb"}
	case sw.Emulate != nil:
		sw.Monitor = nil // emulate runs each profile under the monitor itself
	}
	if name := probeOnlyFlagGiven(c); name != "" && !opt.enabled {
		return opt, usageError{fmt.Sprintf("--%s changes what the probe does: use it with --probe", name)}
	}
	return opt, nil
}

// probeOnlyFlagGiven is the first flag given whose usage says "with
// --probe", "" for none: only a probe reads them, and without one
// recommend went on as if they were not there. A flag an environment
// variable can set (--monitor-bin) is a site's setting, not a mistake.
func probeOnlyFlagGiven(c *cli.Context) string {
	for _, f := range probeFlags() {
		doc, ok := f.(cli.DocGenerationFlag)
		name := f.Names()[0]
		if ok && strings.HasPrefix(doc.GetUsage(), probeOnly) && len(doc.GetEnvVars()) == 0 && c.IsSet(name) {
			return name
		}
	}
	return ""
}

// runProbe measures the script on the chosen profiles: all at once, or as
// a ladder from the smallest (see bench.Probe). Ctrl-C stops the waiting,
// not the jobs, and says how to follow them.
func runProbe(ctx context.Context, opt probeOptions, env commandEnv, site *catalog.Site, script *slurm.Script) error {
	sw := opt.sweep
	profiles, err := profilesFlag(site, sw.Profiles)
	if err != nil {
		return err
	}
	sw.Script, sw.Site, sw.Profiles = script, site, profiles
	if sw.OutDir == "" {
		sw.OutDir = bench.DefaultProbeDir(script.Path, time.Now())
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	show := &probeProgress{env: env, bar: queueBar{w: env.Err, tty: isTTY(env.Err)}}
	defer show.bar.finish()
	res, err := bench.Probe(ctx, bench.ProbeOptions{Sweep: sw, Ladder: opt.ladder, Workload: opt.workload, WorkDir: workingDir(),
		Wait: opt.measure.wait}, measureDeps(env, opt.measure, show.event))
	show.bar.finish()
	if err != nil && res.Dir() != "" {
		return probeStopped(ctx, env, err, res.Dir(), script.Path)
	}
	return lintFailure(env.Err, err, script.Path, "fix them first")
}

// probeStopped is the error of a probe that stopped waiting for jobs it
// had submitted (Ctrl-C, --timeout, squeue failing): they run on and are
// charged, so it says so and how to take them up.
func probeStopped(ctx context.Context, env commandEnv, err error, dir, script string) error {
	takeUp := fmt.Sprintf("'migadvisor wait --sweep %s' waits for them, then 'migadvisor recommend %s' advises",
		slurm.ShellWord(dir), slurm.ShellWord(script))
	if ctx.Err() == nil && bench.StoppedWaiting(err) {
		return fmt.Errorf("%w; the probe's jobs were submitted and still run in Slurm, charged as they run: %s", err, takeUp)
	}
	return interrupted(ctx, env.Err, err, "the probe's jobs still run in Slurm: "+takeUp)
}

// probeProgress shows a probe's steps: on a terminal as they happen (with
// wait's bar), elsewhere only what the user must know
// (bench.ProbeEventLine).
type probeProgress struct {
	env commandEnv
	bar queueBar
}

func (p *probeProgress) event(e bench.ProbeEvent) {
	if e.Kind == bench.ProbeQueue {
		p.bar.show(e.Queue)
	}
	if line, always := bench.ProbeEventLine(e); line != "" && (always || p.bar.tty) {
		fmt.Fprintln(p.env.Err, line) // pipes and scripts get only what they must know
	}
}
