//go:build !noreport

// emulate runs its command under the monitor, which the sbatch wrapper's
// binary (-tags noreport) leaves out; so does it (docs_noreport.go).

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/bench/emulate"
	"github.com/migadvisor/migadvisor/bench/gpu"
	"github.com/migadvisor/migadvisor/internal/atomicfile"
	"github.com/migadvisor/migadvisor/slurm"
)

func emulateCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
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
	})
}

// emulateOptions are emulate's flags and the command.
type emulateOptions struct {
	Global     globalFlags
	Profiles   []string
	Budget     time.Duration
	Out        string
	MPSControl string
	Command    []string
	JSON       bool
	JobID      string // SLURM_JOB_ID, inside a job
}

func emulateOptionsFrom(c *cli.Context) (emulateOptions, error) {
	o := emulateOptions{Global: globalFlagsFrom(c), Budget: c.Duration("budget"), Out: c.String("out"),
		MPSControl: c.String("mps-control"), Command: c.Args().Slice(), JSON: c.Bool("json"), JobID: os.Getenv("SLURM_JOB_ID")}
	if o.Out == "" {
		o.Out = slurm.EmulationDir(o.JobID)
	}
	if p := c.String("profiles"); p != "" {
		o.Profiles = strings.Split(p, ",")
	}
	if len(o.Command) == 0 {
		return o, usageError{"emulate needs a command: migadvisor emulate -- CMD [ARGS...]"}
	}
	if o.Budget < 0 {
		return o, usageError{"--budget must not be negative"}
	}
	return o, nil
}

// deviceOf is the GPU the runs saw: the first monitor summary's device.
func deviceOf(dir string, runs []emulate.Result) string {
	for _, r := range runs {
		if r.Summary == "" {
			continue
		}
		if d, ok := slurm.FirstMonitorDevice(filepath.Join(dir, r.Summary)); ok {
			return d.Name
		}
	}
	return ""
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
	rec := slurm.EmulationRecord{Version: slurm.EmulationVersion, Site: site.Name, JobID: o.JobID, Command: o.Command,
		Started: time.Now().UTC().Format(time.RFC3339)}
	save := func(runs []emulate.Result) {
		rec.Runs, rec.GPU = runs, deviceOf(o.Out, runs)
		data, err := json.MarshalIndent(rec, "", "  ")
		if err == nil {
			err = atomicfile.Write(filepath.Join(o.Out, slurm.EmulationRecordName), append(data, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(w.Err, "migadvisor emulate: the record: %v\n", err)
		}
	}
	measure := emulateMeasure()
	if measure != nil {
		if rec.Whole, err = emulate.Measure(ctx, measure, os.Environ()); err != nil {
			fmt.Fprintf(w.Err, "migadvisor emulate: the whole GPU could not be measured (times stay as they ran): %v\n", err)
		}
	}
	rec.Runs, err = emulate.Run(ctx, emulate.Options{Targets: targets, Command: o.Command, Budget: o.Budget,
		MPSControl: o.MPSControl, Dir: o.Out, Env: os.Environ(), Stderr: w.Err,
		Monitor: emulateMonitor, Ran: save, Measure: measure, Whole: rec.Whole})
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if len(rec.Runs) == 0 {
		return errors.New("no run was made")
	}
	if o.JSON {
		return writeJSON(w.Out, rec)
	}
	t := newTable(w.Out)
	fmt.Fprintln(t, "PROFILE\tSMS\tMEMORY CAP\tOUTCOME\tEXIT\tSECONDS\tOUTPUT")
	for _, r := range rec.Runs {
		sms, capText := "all", "none"
		if r.Emulated {
			sms, capText = fmt.Sprintf("%d%%", r.Percentage), strings.TrimPrefix(r.MemoryLimit, "0=")
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%d\t%.1f\t%s\n", r.Profile, sms, capText, r.Outcome, r.ExitStatus, r.Seconds,
			filepath.Join(o.Out, r.Output))
	}
	return t.Flush()
}
