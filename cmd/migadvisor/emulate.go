//go:build !noreport

// emulate runs its command under the monitor, which the sbatch wrapper's
// binary (-tags noreport) leaves out; so does it (docs_noreport.go).

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

	"github.com/migadvisor/migadvisor/bench/emulate"
	"github.com/migadvisor/migadvisor/bench/gpu"
	"github.com/migadvisor/migadvisor/slurm"
)

func emulateCommand() *cli.Command {
	return &cli.Command{
		Name:        "emulate",
		Usage:       "run a command once per MIG profile on a whole GPU, each under CUDA MPS limits",
		ArgsUsage:   "[--profiles LIST] [--budget 10m] [--out DIR] -- CMD [ARGS...]",
		Description: helpText("emulate"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "profiles", Usage: "comma-separated profiles of the site (default: all)"},
			&cli.DurationFlag{Name: "budget", Usage: "the longest each profile's run may take (0: no limit)"},
			&cli.StringFlag{Name: "out", DefaultText: "migadvisor-emulate, in a Slurm job migadvisor-emulate-$SLURM_JOB_ID (where collect finds it)", Usage: "the directory for each run's output and summary"},
			&cli.StringFlag{Name: "mps-control", EnvVars: []string{"MIGADVISOR_MPS_CONTROL"}, Usage: "the nvidia-cuda-mps-control to use (default: on PATH)"},
			jsonFlag(),
		},
		Action: bindAction(emulateOptionsFrom, runEmulate),
	}
}

// emulateOptions are emulate's flags and the command.
type emulateOptions struct {
	Global   globalFlags
	Profiles []string
	Run      emulate.Options // the command, its budget, the MPS control and the directory
	JSON     bool
	JobID    string // SLURM_JOB_ID, inside a job
}

func emulateOptionsFrom(c *cli.Context) (emulateOptions, error) {
	o := emulateOptions{Global: globalFlagsFrom(c), JSON: c.Bool("json"), JobID: os.Getenv("SLURM_JOB_ID"), Run: emulate.Options{
		Command: c.Args().Slice(), Budget: c.Duration("budget"), MPSControl: c.String("mps-control"), Dir: c.String("out")}}
	if o.Run.Dir == "" {
		o.Run.Dir = slurm.EmulationDir(o.JobID)
	}
	if p := c.String("profiles"); p != "" {
		o.Profiles = strings.Split(p, ",")
	}
	if len(o.Run.Command) == 0 {
		return o, usageError{"emulate needs a command: migadvisor emulate -- CMD [ARGS...]"}
	}
	if o.Run.Budget < 0 {
		return o, usageError{"--budget must not be negative"}
	}
	return o, nil
}

// emulateMonitor is the command that runs each profile's run under the
// monitor: this program's own monitor. Tests run without one.
var emulateMonitor = func(summary string) []string {
	self, err := os.Executable()
	if err != nil {
		self = "migadvisor"
	}
	return []string{self, "monitor", "--out", summary}
}

// emulateMeasure is the command that measures the slice it runs in:
// this program's measure-slice. Tests replace it.
var emulateMeasure = func() []string {
	self, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{self, "measure-slice"}
}

// measureSliceCommand measures the GPU slice it runs in, for emulate: run
// by it under each profile's MPS limits. Hidden: its output is emulate's.
func measureSliceCommand() *cli.Command {
	return &cli.Command{
		Name:        "measure-slice",
		Usage:       "measure the SMs and copy bandwidth of the GPU (or MPS share of one) this process sees, as JSON",
		Description: helpText("measure-slice"),
		Hidden:      true,
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			m, err := gpu.MeasureSlice(256<<20, 2*time.Second)
			if err != nil {
				return fmt.Errorf("measure-slice: %w", err)
			}
			return writeJSON(c.App.Writer, m)
		},
	}
}

func runEmulate(ctx context.Context, o emulateOptions, w outWriters) error {
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	targets, err := emulate.Targets(site, o.Profiles)
	if err != nil {
		return usageError{err.Error()}
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	run := o.Run
	run.Targets, run.Env, run.Stderr, run.Monitor, run.Measure = targets, os.Environ(), w.Err, emulateMonitor, emulateMeasure()
	rec, err := emulate.Recorded(ctx, run, site.Name, o.JobID)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(w.Out, rec)
	}
	return emulate.WriteTable(w.Out, run.Dir, rec.Runs)
}
