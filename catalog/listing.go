package catalog

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// Listing is the site's profiles as 'migadvisor catalog' lists them: what
// each asks Slurm for, its size and what it costs.
type Listing struct {
	Site        string          `json:"site"`
	Title       string          `json:"title,omitempty"`
	Source      string          `json:"source"`
	GPUModel    string          `json:"gpu_model,omitempty"`
	MaxWalltime string          `json:"max_walltime,omitempty"`
	Profiles    []ListedProfile `json:"profiles"`
}

// ListedProfile is one profile of a Listing.
type ListedProfile struct {
	Name            string   `json:"name"`
	Request         string   `json:"request"`
	GRESType        string   `json:"gres_type"`
	MIG             bool     `json:"mig"`
	SMs             int      `json:"sms"`
	UsableMemoryMiB float64  `json:"usable_memory_mib"`
	BilledMemoryGiB float64  `json:"billed_memory_gib"`
	BandwidthShare  float64  `json:"bandwidth_share"`
	Partitions      []string `json:"partitions"`
	SUPerHour       float64  `json:"su_per_hour"` // for 1 CPU and ListedJobMiB
}

// Listing lists the site's profiles, each priced as the listed job.
func (s *Site) Listing() (Listing, error) {
	l := Listing{Site: s.Name, Title: s.Title, Source: s.Source, GPUModel: s.GPUModel}
	if s.MaxWalltime.IsSet() {
		l.MaxWalltime = s.MaxWalltime.String()
	}
	for i := range s.Profiles {
		p := &s.Profiles[i]
		rate, err := s.ListedRate(p)
		if err != nil {
			return Listing{}, err
		}
		partitions := p.Partitions
		if partitions == nil {
			partitions = []string{} // JSON: [], never null
		}
		l.Profiles = append(l.Profiles, ListedProfile{
			Name: p.Name, Request: p.Request, GRESType: p.GRESType, MIG: p.IsMIG(), SMs: p.SMs,
			UsableMemoryMiB: round6(p.UsableMemory.MiB()), BilledMemoryGiB: round6(p.BilledMemory.GiB()),
			BandwidthShare: round6(p.BandwidthShare), Partitions: partitions, SUPerHour: round6(rate),
		})
	}
	return l, nil
}

// WriteText writes the listing as a title line and a table.
func (l Listing) WriteText(w io.Writer) error {
	title := l.Site
	if l.Title != "" {
		title += " (" + l.Title + ")"
	}
	fmt.Fprintf(w, "%s: %s, max walltime %s [%s]\n\n", title, orDash(l.GPUModel), orDash(l.MaxWalltime), l.Source)
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "PROFILE\tREQUEST\tSMS\tUSABLE MEMORY\tBANDWIDTH\tPARTITIONS\tSU/H (1 CPU, 4G)")
	for _, p := range l.Profiles {
		fmt.Fprintf(t, "%s\t%s\t%d\t%s\t%.1f%%\t%s\t%s\n", p.Name, p.Request, p.SMs, Size(p.UsableMemoryMiB),
			100*p.BandwidthShare, orDash(strings.Join(p.Partitions, ",")), formatRate(p.SUPerHour))
	}
	return t.Flush()
}

// round6 trims float noise (5 × 0.556 = 2.7800000000000002) from JSON.
func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// formatRate prints a rate without needless decimals (3, 2.5, 0.333).
func formatRate(x float64) string {
	if x == math.Trunc(x) {
		return fmt.Sprintf("%d", int64(x))
	}
	return fmt.Sprintf("%.3g", x)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
