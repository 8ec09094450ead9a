package monitor

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/migadvisor/migadvisor/internal/suggest"
)

// Help is the monitor's usage, shared by 'migadvisor monitor' and the lean
// migadvisor-monitor binary.
const Help = `Runs CMD with the job's stdin, stdout and stderr, passes on SIGTERM, SIGINT,
SIGHUP, SIGUSR1 and SIGUSR2, and exits with CMD's exact status (128+N when a
signal N ended it; 127 when CMD is not found, 126 when it cannot be run).

While CMD runs it samples, through NVML, every GPU or MIG device the job can
see (CUDA_VISIBLE_DEVICES: indices, GPU- or MIG- UUIDs): used and total memory,
the memory of CMD's own processes, and utilization where the device reports it
(A100 MIG slices do not: "unsupported"). At the end it writes a JSON summary
and, to stderr, one line per device that 'migadvisor collect' reads from the
job output:
   MIGADVISOR_GPU peak_mib=5812 used_peak_mib=5890 total_mib=9728 ... device=...

The summary goes to --out, or inside a Slurm job to migadvisor-<jobid>.json
beside the job's output file. Without NVML (a CPU node, no driver) it prints
one warning and CMD runs as usual; an NVML error mid-run stops sampling, not
CMD. A bad --interval is a warning, never a reason not to run CMD.

Options:
   --interval DURATION   sampling period, e.g. 500ms, 2s (default 500ms) [$MIGADVISOR_MONITOR_INTERVAL]
   --out FILE            the summary file [$MIGADVISOR_MONITOR_OUT]

Examples:
   migadvisor monitor -- python train.py --epochs 3
   srun migadvisor monitor --interval 1s -- ./simulate input.dat
   migadvisor monitor --out gpu.json -- bash job.sh
   migadvisor-monitor -- python train.py      # the lean binary that sweep variants prefer`

// minInterval keeps a mistyped interval from turning the monitor into a load.
const minInterval = 50 * time.Millisecond

// Exit status of a mistake on the monitor's own command line.
const exitUsage = 2

// Main runs the monitor's command line, [--interval D] [--out FILE] [--]
// CMD [ARGS...], and returns the exit status. Its flags end at CMD's first
// word, so CMD's own flags are never taken for the monitor's.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) (string, bool), lib func() nvml.Interface) int {
	flags, cmd, err := parseArgs(args, env)
	if err != nil {
		fmt.Fprintf(stderr, "migadvisor monitor: %v\nRun 'migadvisor monitor --help' for usage.\n", err)
		return exitUsage
	}
	if flags.help {
		fmt.Fprintf(stdout, "Usage: migadvisor monitor [--interval 500ms] [--out FILE] -- CMD [ARGS...]\n\n%s\n", Help)
		return 0
	}
	out := flags.out
	if out == "" {
		out = DefaultOut(env, StdoutPath())
	}
	status, sum, err := Run(Options{Command: cmd, Interval: parseInterval(flags.interval, stderr),
		Stdin: stdin, Stdout: stdout, Stderr: stderr, NVML: lib, Env: env})
	if err != nil {
		fmt.Fprintf(stderr, "migadvisor monitor: %v\n", err)
		return status
	}
	Finish(sum, out, stderr)
	return status
}

type cliFlags struct {
	interval, out string
	help          bool
}

func parseArgs(args []string, env func(string) (string, bool)) (cliFlags, []string, error) {
	var f cliFlags
	f.interval, _ = env("MIGADVISOR_MONITOR_INTERVAL")
	f.out, _ = env("MIGADVISOR_MONITOR_OUT")
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, attached := strings.Cut(a, "=")
		switch {
		case a == "--":
			cmd, err := nonEmpty(args[i+1:])
			return f, cmd, err
		case a == "-h" || a == "--help" || a == "-help":
			f.help = true
			return f, nil, nil
		case name == "--interval" || name == "-interval" || name == "--out" || name == "-out":
			if !attached {
				if i+1 >= len(args) {
					return f, nil, fmt.Errorf("%s needs a value", a)
				}
				i++
				value = args[i]
			}
			if strings.HasSuffix(name, "interval") {
				f.interval = value
			} else {
				f.out = value
			}
		case strings.HasPrefix(a, "-"):
			typed := strings.TrimLeft(name, "-")
			if near := suggest.Nearest(typed, []string{"interval", "out", "help"}, min(2, len(typed)-1)); near != "" {
				return f, nil, fmt.Errorf("unknown flag %s (did you mean --%s?)", a, near)
			}
			return f, nil, fmt.Errorf("unknown flag %s (put the command after --)", a)
		default:
			cmd, err := nonEmpty(args[i:])
			return f, cmd, err
		}
	}
	_, err := nonEmpty(nil)
	return f, nil, err
}

func nonEmpty(cmd []string) ([]string, error) {
	if len(cmd) == 0 {
		return nil, fmt.Errorf("monitor needs a command to run: migadvisor monitor -- CMD [ARGS...]")
	}
	return cmd, nil
}

// parseInterval never refuses: a bad value must not keep the job from running.
func parseInterval(text string, stderr io.Writer) time.Duration {
	if text == "" {
		return DefaultInterval
	}
	d, err := time.ParseDuration(text)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "migadvisor monitor: --interval %q is not a duration such as 500ms; sampling every %s\n", text, DefaultInterval)
		return DefaultInterval
	case d < minInterval:
		fmt.Fprintf(stderr, "migadvisor monitor: --interval %s is too short; sampling every %s\n", d, minInterval)
		return minInterval
	}
	return d
}
