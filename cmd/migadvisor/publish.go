package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/collect"
	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/internal/textutil"
)

func publishCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:        "publish",
		Usage:       "publish the history for other hosts: a read-only snapshot and the advice index",
		ArgsUsage:   "DIR",
		Description: helpText("publish"),
		Flags:       []cli.Flag{jsonFlag(), siteStoreFlag("publish the site history in MariaDB/MySQL that this option file reaches, not --db (by default the site file's [history] site_store)")},
		Action:      bindAction(publishOptionsFrom, runPublish),
	})
}

type publishOptions struct {
	Global    globalFlags
	Dir       string
	JSON      bool
	SiteStore string // --site-store: an option file, "off", or "" for the site file's
}

func publishOptionsFrom(c *cli.Context) (publishOptions, error) {
	if c.NArg() != 1 {
		return publishOptions{}, usageError{"publish needs the directory to publish in: migadvisor publish DIR"}
	}
	return publishOptions{Global: globalFlagsFrom(c), Dir: c.Args().First(), JSON: c.Bool("json"), SiteStore: c.String("site-store")}, nil
}

func runPublish(ctx context.Context, o publishOptions, w outWriters) error {
	if err := collect.CheckPublishDir(o.Dir); err != nil {
		return err
	}
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	store, err := collect.OpenSiteStore(ctx, o.SiteStore, site.History.SiteStore, true)
	if err != nil {
		return err
	}
	var st *history.Store
	if store != nil {
		defer store.Close()
	} else {
		if st, err = history.OpenWith(ctx, o.Global.DB, history.Options{ReadOnly: true}); err != nil {
			return err
		}
		defer st.Close()
	}
	pub, err := collect.Publish(ctx, st, store, o.Dir)
	if err != nil {
		return err
	}
	sayPublished(w.Err, pub)
	rep := pub.Summary()
	if o.JSON {
		return writeJSON(w.Out, rep)
	}
	printPublished(w.Out, rep)
	return nil
}

// sayPublished says on stderr what a publication warns of.
func sayPublished(stderr io.Writer, p collect.Publication) {
	if p.Warning != "" {
		fmt.Fprintf(stderr, "migadvisor: %s\n", p.Warning)
	}
}

func printPublished(out io.Writer, p collect.PublishSummary) {
	fmt.Fprintf(out, "published %s and %s (%s of %s)", p.Snapshot, p.Index, textutil.Plural(p.Runs, "run"), textutil.Plural(p.Scripts, "script"))
	if strings.HasPrefix(p.From, "site store ") {
		fmt.Fprintf(out, " from the %s", p.From)
	}
	fmt.Fprintln(out)
}
