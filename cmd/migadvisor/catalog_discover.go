//go:build !noreport

// catalog discover links NVML; the sbatch wrapper's binary leaves it out
// (docs_noreport.go).

package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/bench/gpu"
	"github.com/migadvisor/migadvisor/catalog"
)

func catalogDiscoverCommand() *cli.Command {
	return &cli.Command{
		Name:        "discover",
		Usage:       "read this node's MIG GPU-instance profiles through NVML and print a site file",
		Description: helpText("catalog-discover"),
		Flags:       []cli.Flag{jsonFlag()},
		Action:      bindAction(catalogOptionsOf("catalog discover"), runDiscover),
	}
}

// runDiscover prints the site file that the node's GPUs make.
func runDiscover(_ context.Context, o catalogOptions, w outWriters) error {
	gpus, err := gpu.NewDiscoverer().Discover()
	if errors.Is(err, gpu.ErrNoNVML) {
		return fmt.Errorf("catalog discover: %w", err)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(w.Out, map[string]any{"gpus": gpus})
	}
	host, _ := os.Hostname()
	fmt.Fprint(w.Out, catalog.SiteTOML(gpus, host))
	return nil
}
