package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

func jsonFlag() cli.Flag { return &cli.BoolFlag{Name: "json", Usage: "print JSON instead of text"} }

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// isTTY reports whether w is a terminal: hints and confirmations are printed
// only then, so scripts and pipes get data alone.
func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// round6 trims float noise (5 × 0.556 = 2.7800000000000002) from JSON output.
func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// formatNumber prints a rate without needless decimals (3, 2.5, 0.333).
func formatNumber(x float64) string {
	if x == math.Trunc(x) {
		return fmt.Sprintf("%d", int64(x))
	}
	return fmt.Sprintf("%.3g", x)
}
