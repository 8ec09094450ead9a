package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/slurm"
)

func sweepCommand() *cli.Command {
	return &cli.Command{
		Name:        "sweep",
		Usage:       "write one variant of a batch script per GPU profile",
		ArgsUsage:   "JOB.sh",
		Description: helpText("sweep"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "directory for the variants and sweep.json (required)"},
			&cli.StringFlag{Name: "profiles", Usage: "comma-separated profiles, by name or GRES type (default: all of the site's)"},
			&cli.BoolFlag{Name: "force", Usage: "write variants even if the script has lint errors"},
			asOneGPUFlag(""),
			timeFlag(""),
			noPreallocFlag(""),
			&cli.BoolFlag{Name: "submit", Usage: "submit each variant with sbatch and record the job ids"},
			&cli.StringFlag{Name: "workload", Usage: "tag the submitted jobs with a workload name (with --submit)"},
			&cli.BoolFlag{Name: "no-monitor", Usage: "write variants that do not run under the GPU memory monitor"},
			monitorBinFlag("the monitor binary the jobs run, tried before 'migadvisor' on PATH (default: migadvisor-monitor beside this binary, else this binary); with --emulate, the migadvisor the job runs"),
			clusterFlag(),
			slurmBinFlag(),
			jsonFlag(),
		}, emulateFlags("")...),
		Action: bindAction(sweepOptionsFrom, runSweep),
	}
}

// sweepOptions are sweep's flags and argument.
type sweepOptions struct {
	Global globalFlags
	Slurm  slurmFlags
	path   string // JOB.sh
	// run is bench.RunSweep's but the script, the site and where sbatch
	// runs; its profiles as given (none: the site's).
	run  bench.SweepRun
	json bool
}

// addsRuns: a sweep that submits records its variants' jobs.
func (o sweepOptions) addsRuns() bool { return o.run.Submit }

func sweepOptionsFrom(c *cli.Context) (sweepOptions, error) {
	path, err := oneArg(c, "JOB.sh")
	if err != nil {
		return sweepOptions{}, err
	}
	opt := sweepOptions{Global: globalFlagsFrom(c), Slurm: slurmFlagsFrom(c), path: path, json: c.Bool("json"), run: bench.SweepRun{
		Sweep: bench.SweepOptions{Profiles: splitList(c.String("profiles")), OutDir: c.String("out"), Force: c.Bool("force"),
			Monitor: monitorWrapFrom(c), AsOneGPU: c.Bool("as-one-gpu"), NoPrealloc: c.Bool("no-prealloc")},
		Submit: c.Bool("submit"), Workload: c.String("workload")}}
	sw := &opt.run.Sweep
	if sw.OutDir == "" {
		return opt, usageError{"sweep needs --out DIR"}
	}
	if sw.Time, err = variantTime(c.String("time")); err != nil {
		return opt, err
	}
	if sw.Emulate, sw.EmulateBudget, err = emulateFrom(c, opt.Global); err != nil {
		return opt, err
	}
	if sw.Emulate != nil {
		sw.Monitor = nil // emulate runs each profile under the monitor itself
	}
	return opt, nil
}

func runSweep(ctx context.Context, opt sweepOptions, w outWriters) error {
	env := newEnv(opt.Global, opt.Slurm, w)
	site, err := env.site()
	if err != nil {
		return err
	}
	script, err := slurm.ReadScript(opt.path)
	if err != nil {
		return err
	}
	run, dir := opt.run, opt.run.Sweep.OutDir
	run.Sweep.Script, run.Sweep.Site, run.WorkDir = script, site, workingDir()
	sw, err := bench.RunSweep(ctx, run, bench.ProbeDeps{Slurm: env.submitter(), History: env.perCall(), Progress: bench.WarningsTo(env.Err)})
	if err != nil {
		if sw != nil { // written, and submitted in part
			printSweep(env, dir, sw)
		}
		return lintFailure(env.Err, err, script.Path, "fix them or use --force")
	}
	if opt.json {
		return writeJSON(env.Out, struct {
			Dir string `json:"dir"`
			*bench.Sweep
		}{dir, sw})
	}
	printSweep(env, dir, sw)
	return nil
}

// printSweep shows the variants, says why any runs without the monitor,
// and on a terminal where the record is and what comes next.
func printSweep(env commandEnv, dir string, sw *bench.Sweep) {
	sw.WriteText(env.Out, dir)
	for _, why := range sw.NoMonitorReasons() {
		fmt.Fprintf(env.Err, "migadvisor: the variants run without the GPU memory monitor: %s\n", why)
	}
	if isTTY(env.Out) {
		fmt.Fprintf(env.Out, "\nfingerprint %s; record in %s\n", sw.Fingerprint, filepath.Join(dir, bench.SweepFileName))
		if sw.Submitted() {
			fmt.Fprintf(env.Out, "next: migadvisor wait --sweep %s && migadvisor collect\n", dir)
		}
	}
}
