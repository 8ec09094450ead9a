//go:build noreport

package main

import "github.com/urfave/cli/v2"

// The lean binary for the sbatch wrapper (migadvisor-sbatch, -tags
// noreport) leaves out what only other commands need and costs every
// submission start-up time or size: docs and report (the report package and
// its plotting library, docs.go, report.go), the monitor (NVML, monitor.go) and catalog discover
// (NVML, catalog_discover.go), and emulate, which runs the monitor
// (emulate.go). A nil command is dropped from the list.

func docsCommand() *cli.Command { return nil }

func reportCommand() *cli.Command { return nil }

func planCommand() *cli.Command { return nil }

func monitorCommand() *cli.Command { return nil }

func catalogDiscoverCommand() *cli.Command { return nil }

func emulateCommand() *cli.Command { return nil }

func measureSliceCommand() *cli.Command { return nil }
