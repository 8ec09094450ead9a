package main

import (
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
		Action: func(c *cli.Context) error {
			return silentExit(monitor.Main(c.Args().Slice(), os.Stdin, c.App.Writer, c.App.ErrWriter, os.LookupEnv, newNVML))
		},
	}
}
