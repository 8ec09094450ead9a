//go:build !noreport

// The monitor links NVML and bench/monitor; the sbatch wrapper's binary
// (-tags noreport, docs_noreport.go) leaves it out: jobs run
// migadvisor-monitor or migadvisor, never the wrapper's binary.

package main

import (
	"context"
	"os"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/bench/monitor"
)

// newNVML is the NVML the monitor opens; tests replace it with a fake.
var newNVML = func() nvml.Interface { return nvml.New() }

// monitorCommand hands its arguments to monitor.Main, which the lean
// migadvisor-monitor binary runs too: one parser, one behaviour.
func monitorCommand() *cli.Command {
	return &cli.Command{
		Name:            "monitor",
		Usage:           "run a command and measure the GPU memory it uses (NVML)",
		ArgsUsage:       "[--interval 500ms] [--out FILE] -- CMD [ARGS...]",
		Description:     monitor.Help,
		SkipFlagParsing: true,
		Action:          bindAction(monitorOptionsFrom, runMonitor),
	}
}

// monitorOptions are the monitor's arguments, which monitor.Main reads:
// its own flags, then the command.
type monitorOptions struct {
	Args []string
}

func monitorOptionsFrom(c *cli.Context) (monitorOptions, error) {
	return monitorOptions{Args: c.Args().Slice()}, nil
}

// runMonitor ends with the command's exit status (or the monitor's own
// for a usage mistake), which monitor.Main has said all about.
func runMonitor(_ context.Context, o monitorOptions, w outWriters) error {
	return silentExit(monitor.Main(o.Args, os.Stdin, w.Out, w.Err, os.LookupEnv, newNVML))
}
