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
		Name:  "discover",
		Usage: "read this node's MIG GPU-instance profiles through NVML and print a site file",
		Description: `On a node with an NVIDIA GPU and driver, asks NVML for every GPU-instance
profile each GPU supports (this works with MIG mode disabled too) and prints a
site file to edit: check the GRES type names against gres.conf, the partitions,
and the [billing] section. Without NVML it fails with exit status 1.

Examples:
   migadvisor catalog discover > /etc/migadvisor/site.toml
   migadvisor catalog discover --json`,
		Flags:  []cli.Flag{jsonFlag()},
		Action: bindAction(catalogOptionsOf("catalog discover"), runDiscover),
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
