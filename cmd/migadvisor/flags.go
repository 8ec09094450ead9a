package main

import (
	"errors"
	"fmt"
	"os/user"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/bench/workloads"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// emulateFlags are --emulate and --budget; prefix begins each usage.
func emulateFlags(prefix string) []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "emulate", Usage: prefix + "one job on the site's whole GPU that runs the script once per profile under 'migadvisor emulate' (CUDA MPS), for a GPU not cut into slices"},
		&cli.DurationFlag{Name: "budget", Usage: "with --emulate: the longest each profile's run may take (default: the script's --time)"},
	}
}

// emulateFrom reads --emulate and --budget: how the job reaches migadvisor
// (--monitor-bin when it names migadvisor itself, not the lean monitor,
// else this binary).
func emulateFrom(c *cli.Context, g globalFlags) (*slurm.EmulateWrap, time.Duration, error) {
	budget := c.Duration("budget")
	if !c.Bool("emulate") {
		if budget != 0 {
			return nil, 0, usageError{"--budget goes with --emulate"}
		}
		return nil, 0, nil
	}
	if budget < 0 {
		return nil, 0, usageError{"--budget must not be negative"}
	}
	bin := c.String("monitor-bin")
	if filepath.Base(bin) == slurm.LeanMonitor {
		bin = ""
	}
	return &slurm.EmulateWrap{Binary: slurm.MonitorWrapFor(bin).Binary, Site: g.Site}, budget, nil
}

// noPreallocFlag is --no-prealloc; prefix begins its usage.
func noPreallocFlag(prefix string) cli.Flag {
	return &cli.BoolFlag{Name: "no-prealloc", Usage: prefix + "variants turn JAX's and TensorFlow's preallocation off " +
		"(XLA_PYTHON_CLIENT_PREALLOCATE=false, XLA_PYTHON_CLIENT_ALLOCATOR=platform, TF_FORCE_GPU_ALLOW_GROWTH=true): their GPU peak is then the need"}
}

// timeFlag sets every variant's --time (a probe after a run that reached its
// time limit needs a longer one than the script's).
func timeFlag(prefix string) cli.Flag {
	return &cli.StringFlag{Name: "time", Aliases: []string{"t"}, Usage: prefix + "the --time every variant asks for (default: the script's)"}
}

// variantTime checks --time: sbatch's formats, before anything is written.
func variantTime(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	if _, err := slurm.ParseTimeLimit(v); err != nil {
		return "", usageError{fmt.Sprintf("--time %q is not a time limit sbatch reads: use minutes (90), 1:30:00 or 2-00:00:00", v)}
	}
	return v, nil
}

// asOneGPUFlag lets a script that uses several GPUs be swept on one each;
// prefix begins its usage.
func asOneGPUFlag(prefix string) cli.Flag {
	return &cli.BoolFlag{Name: "as-one-gpu", Usage: prefix + "sweep a script that uses several GPUs on one slice or GPU each (it must be able to run so)"}
}

// monitorBinFlag names the monitor the variants run.
func monitorBinFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "monitor-bin", EnvVars: []string{"MIGADVISOR_MONITOR_BIN"}, Usage: usage}
}

// monitorWrapFrom reads --no-monitor and --monitor-bin.
func monitorWrapFrom(c *cli.Context) *slurm.MonitorWrap {
	if c.Bool("no-monitor") {
		return nil
	}
	return slurm.MonitorWrapFor(c.String("monitor-bin"))
}

// siteStoreFlag is --site-store (MIGADVISOR_SITE_STORE): the option file of
// the site history in MariaDB/MySQL, for what usage says.
func siteStoreFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "site-store", EnvVars: []string{"MIGADVISOR_SITE_STORE"}, Usage: usage + "; " + collect.StoreOff + ": none"}
}

// profilesFlag is --profiles read at the site (bench.ProbeProfiles): an
// unknown name is a usage error.
func profilesFlag(site *catalog.Site, names []string) ([]string, error) {
	profiles, err := bench.ProbeProfiles(site, names)
	var unknown *catalog.UnknownProfileError
	if errors.As(err, &unknown) {
		return nil, usageError{"--profiles: " + err.Error()}
	}
	return profiles, err
}

// currentUserName is the name of the user running migadvisor, "" if unknown.
func currentUserName() string {
	u, err := user.Current()
	if err != nil {
		return ""
	}
	return u.Username
}

func suiteFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "suite", Value: workloads.DefaultSuite, EnvVars: []string{"MIGADVISOR_SUITE"}, Usage: "the benchmark suite"},
		&cli.StringFlag{Name: "workloads", Usage: "comma-separated workloads of the suite (default: all)"},
	}
}

// suiteChoice is the suite and the workloads of it that --suite and
// --workloads name.
type suiteChoice struct {
	Suite     *workloads.Suite
	Workloads []*workloads.Workload
}

func suiteChoiceFrom(c *cli.Context) (suiteChoice, error) {
	suite, err := workloads.LookupSuite(c.String("suite"))
	if err != nil {
		return suiteChoice{}, usageError{"--suite: " + err.Error()}
	}
	ws, err := suite.Select(splitList(c.String("workloads")))
	if err != nil {
		return suiteChoice{}, usageError{"--workloads: " + err.Error()}
	}
	return suiteChoice{Suite: suite, Workloads: ws}, nil
}

// renderFlags say how the job scripts are written; each has an env twin so
// a site sets its environment once.
func renderFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "directory for the workloads (default: migadvisor-bench-SUITE-TIME)"},
		&cli.BoolFlag{Name: "synthetic", Usage: "random data of the real shapes: no download (tagged WORKLOAD@synthetic)"},
		&cli.BoolFlag{Name: "quick", Usage: "a short run of each workload, to check the setup (tagged WORKLOAD@quick)"},
		&cli.StringFlag{Name: "setup", EnvVars: []string{"MIGADVISOR_BENCH_SETUP"},
			Usage: "shell lines each job runs first (module load, conda activate, source venv/bin/activate)"},
		&cli.StringFlag{Name: "python", EnvVars: []string{"MIGADVISOR_BENCH_PYTHON"}, Value: "python3", Usage: "the Python interpreter of the PyTorch workloads"},
		&cli.StringFlag{Name: "gmx", EnvVars: []string{"MIGADVISOR_BENCH_GMX"}, Usage: "the GROMACS binary (default: gmx, else gmx_mpi, on the node's PATH)"},
		&cli.StringFlag{Name: "data", EnvVars: []string{"MIGADVISOR_BENCH_DATA"}, Usage: "directory for datasets and caches (default: OUT/data)"},
	}
}

// renderOptionsFrom reads renderFlags: how the workloads are written, and
// the directory they go to (--out, else one named by the suite and the time).
func renderOptionsFrom(c *cli.Context, suite *workloads.Suite, now time.Time) workloads.RenderOptions {
	r := workloads.RenderOptions{Dir: c.String("out"), Setup: c.String("setup"), Python: c.String("python"), GMX: c.String("gmx"),
		Data: c.String("data"), Synthetic: c.Bool("synthetic"), Quick: c.Bool("quick")}
	if r.Dir == "" {
		r.Dir = bench.DefaultSuiteDir(suite.Name, now)
	}
	return r
}

// waitFlags are the flags of how long to wait, which wait, recommend
// --probe and benchmark run share; prefix begins each usage.
func waitFlags(prefix string) []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "timeout", Usage: prefix + "give up waiting after this long (0: never)"},
		&cli.DurationFlag{Name: "poll", Value: 15 * time.Second, Usage: prefix + "longest interval between squeue calls"},
	}
}

// waitTimingFrom reads --timeout and --poll: neither may be negative.
func waitTimingFrom(c *cli.Context) (bench.WaitOptions, error) {
	o := bench.WaitOptions{Timeout: c.Duration("timeout"), Poll: c.Duration("poll")}
	for _, d := range []struct {
		flag, example string
		v             time.Duration
	}{{"--timeout", "2h", o.Timeout}, {"--poll", "30s", o.Poll}} {
		if d.v < 0 {
			return o, usageError{fmt.Sprintf("%s is a duration such as %s, not %s", d.flag, d.example, d.v)}
		}
	}
	return o, nil
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
