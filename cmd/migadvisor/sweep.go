package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/slurm"
)

func sweepCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
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
	})
}

// sweepOptions are sweep's flags and argument.
type sweepOptions struct {
	Global   globalFlags
	Slurm    slurmFlags
	path     string // JOB.sh
	out      string
	profiles []string // as given; none: the site's
	force    bool
	asOneGPU bool
	time     string // every variant's --time; "": the script's
	// noPrealloc: variants turn preallocation off, so the peak is the need.
	noPrealloc bool
	submit     bool
	workload   string
	monitor    *slurm.MonitorWrap // nil: --no-monitor
	emulate    *slurm.EmulateWrap // nil: a job per profile
	budget     time.Duration      // each emulated run's, with --emulate
	json       bool
}

// addsRuns: a sweep that submits records its variants' jobs.
func (o sweepOptions) addsRuns() bool { return o.submit }

func sweepOptionsFrom(c *cli.Context) (sweepOptions, error) {
	path, err := oneArg(c, "JOB.sh")
	if err != nil {
		return sweepOptions{}, err
	}
	opt := sweepOptions{Global: globalFlagsFrom(c), Slurm: slurmFlagsFrom(c), path: path, out: c.String("out"), force: c.Bool("force"), asOneGPU: c.Bool("as-one-gpu"),
		submit: c.Bool("submit"), workload: c.String("workload"), monitor: monitorWrapFrom(c), json: c.Bool("json"),
		noPrealloc: c.Bool("no-prealloc")}
	if opt.out == "" {
		return opt, usageError{"sweep needs --out DIR"}
	}
	opt.profiles = splitList(c.String("profiles"))
	if opt.time, err = variantTime(c.String("time")); err != nil {
		return opt, err
	}
	if opt.emulate, opt.budget, err = emulateFrom(c, opt.Global); err != nil {
		return opt, err
	}
	if opt.emulate != nil {
		opt.monitor = nil // emulate runs each profile under the monitor itself
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
	sw, err := bench.RunSweep(ctx, bench.SweepRun{
		Sweep: bench.SweepOptions{Script: script, Site: site, Profiles: opt.profiles, OutDir: opt.out,
			Force: opt.force, Monitor: opt.monitor, AsOneGPU: opt.asOneGPU, Time: opt.time, Emulate: opt.emulate, EmulateBudget: opt.budget,
			NoPrealloc: opt.noPrealloc},
		Submit: opt.submit, Workload: opt.workload, WorkDir: workingDir(),
	}, bench.ProbeDeps{Slurm: env.submitter(), History: historyPerCall{env}, Progress: sayWarnings(env.Err)})
	if err != nil {
		if sw != nil { // written, and submitted in part
			printSweep(env, opt.out, sw)
		}
		return lintFailure(env.Err, err, script.Path, "fix them or use --force")
	}
	if opt.json {
		return writeJSON(env.Out, struct {
			Dir string `json:"dir"`
			*bench.Sweep
		}{opt.out, sw})
	}
	printSweep(env, opt.out, sw)
	return nil
}

// sayWarnings prints a sweep's warnings, and nothing of its progress.
func sayWarnings(stderr io.Writer) func(bench.ProbeEvent) {
	return func(e bench.ProbeEvent) {
		if e.Kind == bench.ProbeWarning {
			fmt.Fprintf(stderr, "migadvisor: warning: %v\n", e.Err)
		}
	}
}

func printSweep(env commandEnv, dir string, sw *bench.Sweep) {
	w := env.Out
	t := newTable(w)
	submitted := sw.Variants[sw.Profiles[0]].JobID != ""
	if submitted {
		fmt.Fprint(t, "JOB ID\t")
	}
	fmt.Fprintln(t, "PROFILE\tVARIANT\tREQUEST\tJOB NAME\tCHANGED")
	for _, name := range sw.Profiles {
		v := sw.Variants[name]
		var changed []string
		if v.Partition != "" {
			changed = append(changed, "partition="+v.Partition)
		}
		if v.QoS != "" {
			changed = append(changed, "qos="+v.QoS)
		}
		if v.Time != "" {
			changed = append(changed, "time="+v.Time)
		}
		if submitted {
			fmt.Fprintf(t, "%s\t", orDash(v.JobID))
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\n", name, filepath.Join(dir, v.File), v.Request, v.JobName, orDash(strings.Join(changed, " ")))
	}
	t.Flush()
	noted := map[string]bool{}
	for _, name := range sw.Profiles {
		if why := sw.Variants[name].NoMonitor; why != "" && !noted[why] {
			noted[why] = true
			fmt.Fprintf(env.Err, "migadvisor: the variants run without the GPU memory monitor: %s\n", why)
		}
	}
	if isTTY(w) {
		fmt.Fprintf(w, "\nfingerprint %s; record in %s\n", sw.Fingerprint, filepath.Join(dir, bench.SweepFileName))
		if submitted {
			fmt.Fprintf(w, "next: migadvisor wait --sweep %s && migadvisor collect\n", dir)
		}
	}
}
