//go:build noreport

package main

import "github.com/urfave/cli/v2"

// docsCommand is left out of the lean binary for the sbatch wrapper (see docs.go).
func docsCommand() *cli.Command { return nil }
