package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
)

func publishCommand() *cli.Command {
	return &cli.Command{
		Name:        "publish",
		Usage:       "publish the history for other hosts: a read-only snapshot and the advice index",
		ArgsUsage:   "DIR",
		Description: helpText("publish"),
		Flags:       []cli.Flag{jsonFlag(), siteStoreFlag("publish the site history in MariaDB/MySQL that this option file reaches, not --db (by default the site file's [history] site_store)")},
		Action:      bindAction(publishOptionsFrom, runPublish),
	}
}

type publishOptions struct {
	Global    globalFlags
	Dir       string
	JSON      bool
	SiteStore string // --site-store: an option file, "off", or "" for the site file's
}

func publishOptionsFrom(c *cli.Context) (publishOptions, error) {
	switch {
	case c.NArg() == 0:
		return publishOptions{}, usageError{"publish needs the directory to publish in: migadvisor publish DIR"}
	case c.NArg() > 1:
		return publishOptions{}, usageError{fmt.Sprintf("publish takes one directory, not %d arguments: migadvisor publish DIR", c.NArg())}
	}
	return publishOptions{Global: globalFlagsFrom(c), Dir: c.Args().First(), JSON: c.Bool("json"), SiteStore: c.String("site-store")}, nil
}

func runPublish(ctx context.Context, o publishOptions, w outWriters) (err error) {
	ctx, stop := stoppable(ctx)
	defer stop()
	defer func() {
		if err != nil {
			err = interrupted(ctx, w.Err, err, "what was published before is in place, whole")
		}
	}()
	if err := collect.CheckPublishDir(o.Dir); err != nil {
		return err
	}
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	pub, err := collect.PublishSiteHistory(ctx, o.SiteStore, site, o.Global.DB, o.Dir)
	if err != nil {
		return err
	}
	if pub.Warning != "" {
		fmt.Fprintf(w.Err, "migadvisor: %s\n", pub.Warning)
	}
	rep := pub.Summary()
	if o.JSON {
		return writeJSON(w.Out, rep)
	}
	rep.WriteText(w.Out)
	return nil
}
