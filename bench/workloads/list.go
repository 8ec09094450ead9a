package workloads

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteList writes the workloads as a table: each one's name, title and
// the software it needs.
func WriteList(w io.Writer, ws []*Workload) error {
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "WORKLOAD\tTITLE\tNEEDS")
	for _, wl := range ws {
		fmt.Fprintf(t, "%s\t%s\t%s\n", wl.Name, wl.Title, wl.Needs)
	}
	return t.Flush()
}
