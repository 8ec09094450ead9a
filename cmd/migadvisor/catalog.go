package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/catalog"
)

// catalogReport is catalog's --json output.
type catalogReport = catalog.Listing

func catalogCommand() *cli.Command {
	return &cli.Command{
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
	}
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
	listing, err := site.Listing()
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(w.Out, listing)
	}
	return listing.WriteText(w.Out)
}

func runExport(_ context.Context, o catalogOptions, w outWriters) error {
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	data, err := site.Export()
	if err != nil {
		return err
	}
	_, err = w.Out.Write(data)
	return err
}
