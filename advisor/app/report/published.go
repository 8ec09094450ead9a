package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WrittenSummary is what a publication wrote of one workload, as docs
// says it (--json).
type WrittenSummary struct {
	Workload string   `json:"workload"`
	Title    string   `json:"title"`
	Table    string   `json:"table"` // the layout; "generic" when the workload names none
	Profiles []string `json:"profiles"`
	Runs     int      `json:"runs"` // over every profile
	Files    []string `json:"files"`
}

// Summary is wr as docs says it.
func (wr Written) Summary() WrittenSummary {
	w := wr.Report.Workload
	s := WrittenSummary{Workload: w.Tag, Title: w.Title, Table: w.Table, Files: wr.Files}
	if s.Table == "" {
		s.Table = "generic"
	}
	for _, pr := range wr.Report.Profiles {
		s.Profiles = append(s.Profiles, pr.Profile.Name)
		s.Runs += pr.Runs
	}
	return s
}

// Summaries are the workloads written, each as docs says it.
func (p Published) Summaries() []WrittenSummary {
	out := make([]WrittenSummary, len(p.Written))
	for i, wr := range p.Written {
		out[i] = wr.Summary()
	}
	return out
}

// WriteText writes a table of the workloads written: layout, runs,
// profiles and files of each.
func (p Published) WriteText(w io.Writer) error {
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "WORKLOAD\tTABLE\tRUNS\tPROFILES\tFILES")
	for _, s := range p.Summaries() {
		fmt.Fprintf(t, "%s\t%s\t%d\t%s\t%s\n", s.Workload, s.Table, s.Runs, strings.Join(s.Profiles, ","), strings.Join(s.Files, " "))
	}
	return t.Flush()
}
