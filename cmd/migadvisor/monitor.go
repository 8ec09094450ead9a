package main

import (
	"fmt"
	"os"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/bench/monitor"
)

// minInterval keeps a mistyped interval from turning the monitor into a load.
const minInterval = 50 * time.Millisecond

// newNVML is the NVML the monitor opens; tests replace it with a fake.
var newNVML = func() nvml.Interface { return nvml.New() }

func monitorCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "monitor",
		Usage:     "run a command and measure the GPU memory it uses (NVML)",
		ArgsUsage: "[--interval 500ms] [--out FILE] -- CMD [ARGS...]",
		Description: `Runs CMD with the job's stdin, stdout and stderr, passes on SIGTERM, SIGINT,
SIGHUP, SIGUSR1 and SIGUSR2, and exits with CMD's exact status (128+N when a
signal N ended it; 127 when CMD is not found, 126 when it cannot be run).

While CMD runs it samples, through NVML, every GPU or MIG device the job can
see (CUDA_VISIBLE_DEVICES: indices, GPU- or MIG- UUIDs): used and total memory,
the memory of CMD's own processes, and utilisation where the device reports it
(A100 MIG slices do not: "unsupported"). At the end it writes a JSON summary
and, to stderr, one line per device that 'collect' reads from the job output:
   MIGADVISOR_GPU peak_mib=5812 used_peak_mib=5890 total_mib=9728 ... device=...

The summary goes to --out, or inside a Slurm job to migadvisor-<jobid>.json
beside the job's output file. Without NVML (a CPU node, no driver) it prints
one warning and CMD runs as usual; an NVML error mid-run stops sampling, not CMD.
'migadvisor sweep' writes variants that run themselves under the monitor.

Examples:
   migadvisor monitor -- python train.py --epochs 3
   srun migadvisor monitor --interval 1s -- ./simulate input.dat
   migadvisor monitor --out gpu.json -- bash job.sh`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "interval", Value: monitor.DefaultInterval.String(), EnvVars: []string{"MIGADVISOR_MONITOR_INTERVAL"},
				Usage: "sampling period (a Go duration: 500ms, 2s)"},
			&cli.StringFlag{Name: "out", EnvVars: []string{"MIGADVISOR_MONITOR_OUT"},
				Usage: "summary file (default inside a Slurm job: migadvisor-<jobid>.json beside the job output)"},
		},
		Action: runMonitor,
	})
}

func runMonitor(c *cli.Context) error {
	stderr := c.App.ErrWriter
	if c.NArg() == 0 {
		return usageError{"monitor needs a command to run: migadvisor monitor -- CMD [ARGS...]"}
	}
	out := c.String("out")
	if out == "" {
		out = monitor.DefaultOut(os.LookupEnv, monitor.StdoutPath())
	}
	status, sum, err := monitor.Run(monitor.Options{
		Command:  c.Args().Slice(),
		Interval: parseInterval(c.String("interval"), stderr),
		Stdin:    os.Stdin, Stdout: c.App.Writer, Stderr: stderr,
		NVML: newNVML,
	})
	if err != nil {
		fmt.Fprintf(stderr, "migadvisor monitor: %v\n", err)
		return silentExit(status)
	}
	monitor.Finish(sum, out, stderr)
	return silentExit(status)
}

// parseInterval never refuses: a bad value must not keep the job from running.
func parseInterval(text string, stderr interface{ Write([]byte) (int, error) }) time.Duration {
	d, err := time.ParseDuration(text)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "migadvisor monitor: --interval %q is not a duration such as 500ms; sampling every %s\n", text, monitor.DefaultInterval)
		return monitor.DefaultInterval
	case d < minInterval:
		fmt.Fprintf(stderr, "migadvisor monitor: --interval %s is too short; sampling every %s\n", d, minInterval)
		return minInterval
	}
	return d
}
