package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/catalog"
)

type catalogProfile struct {
	Name            string   `json:"name"`
	Request         string   `json:"request"`
	GRESType        string   `json:"gres_type"`
	MIG             bool     `json:"mig"`
	SMs             int      `json:"sms"`
	UsableMemoryMiB float64  `json:"usable_memory_mib"`
	BilledMemoryGiB float64  `json:"billed_memory_gib"`
	BandwidthShare  float64  `json:"bandwidth_share"`
	Partitions      []string `json:"partitions"`
	SUPerHour       float64  `json:"su_per_hour"` // for 1 CPU and 4 GB
}

type catalogReport struct {
	Site        string           `json:"site"`
	Title       string           `json:"title,omitempty"`
	Source      string           `json:"source"`
	GPUModel    string           `json:"gpu_model,omitempty"`
	MaxWalltime string           `json:"max_walltime,omitempty"`
	Profiles    []catalogProfile `json:"profiles"`
}

func catalogCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:            "catalog",
		Usage:           "the site's GPU profiles: request, SMs, usable memory, SU per hour",
		Description:     helpText("catalog"),
		Flags:           []cli.Flag{jsonFlag()},
		Action:          bindAction(catalogOptionsOf("catalog"), runCatalog),
		HideHelpCommand: true, // "help, h" is --help again, listed as a subcommand
		Subcommands: slices.DeleteFunc([]*cli.Command{
			catalogDiscoverCommand(),
			{
				Name:        "export",
				Usage:       "print the site file in use",
				Description: helpText("catalog-export"),
				Action:      bindAction(catalogOptionsOf("catalog export"), runExport),
			},
		}, func(c *cli.Command) bool { return c == nil }), // discover, in the lean wrapper binary
	})
}

// catalogOptions are the flags of catalog and its subcommands.
type catalogOptions struct {
	Global globalFlags
	JSON   bool
}

// catalogOptionsOf reads the flags of command (catalog, or one of its
// subcommands), none of which takes an argument.
func catalogOptionsOf(command string) func(*cli.Context) (catalogOptions, error) {
	return func(c *cli.Context) (catalogOptions, error) {
		if c.NArg() > 0 {
			return catalogOptions{}, usageError{fmt.Sprintf("%s takes no arguments, not %q", command, c.Args().First())}
		}
		return catalogOptions{Global: globalFlagsFrom(c), JSON: c.Bool("json")}, nil
	}
}

func runCatalog(_ context.Context, o catalogOptions, w outWriters) error {
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	r := catalogReport{Site: site.Name, Title: site.Title, Source: site.Source, GPUModel: site.GPUModel}
	if site.MaxWalltime.IsSet() {
		r.MaxWalltime = site.MaxWalltime.String()
	}
	for i := range site.Profiles {
		p := &site.Profiles[i]
		rate, err := site.ListedRate(p)
		if err != nil {
			return err
		}
		r.Profiles = append(r.Profiles, catalogProfile{
			Name: p.Name, Request: p.Request, GRESType: p.GRESType, MIG: p.IsMIG(), SMs: p.SMs,
			UsableMemoryMiB: round6(p.UsableMemory.MiB()), BilledMemoryGiB: round6(p.BilledMemory.GiB()),
			BandwidthShare: round6(p.BandwidthShare), Partitions: nonNil(p.Partitions), SUPerHour: round6(rate),
		})
	}
	if o.JSON {
		return writeJSON(w.Out, r)
	}
	printCatalog(w.Out, r)
	return nil
}

func printCatalog(w io.Writer, r catalogReport) {
	title := r.Site
	if r.Title != "" {
		title += " (" + r.Title + ")"
	}
	fmt.Fprintf(w, "%s: %s, max walltime %s [%s]\n\n", title, orDash(r.GPUModel), orDash(r.MaxWalltime), r.Source)
	t := newTable(w)
	fmt.Fprintln(t, "PROFILE\tREQUEST\tSMS\tUSABLE MEMORY\tBANDWIDTH\tPARTITIONS\tSU/H (1 CPU, 4G)")
	for _, p := range r.Profiles {
		fmt.Fprintf(t, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", p.Name, p.Request, p.SMs, catalog.Size(p.UsableMemoryMiB),
			fmt.Sprintf("%.1f%%", 100*p.BandwidthShare), orDash(strings.Join(p.Partitions, ",")), formatNumber(p.SUPerHour))
	}
	t.Flush()
}

func runExport(_ context.Context, o catalogOptions, w outWriters) error {
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	data, err := site.TOML()
	if err != nil {
		return err
	}
	_, err = w.Out.Write(data)
	return err
}
