//go:build !noreport

// The plan command writes its docs page with gonum's plotting library;
// like report, it is left out of the sbatch wrapper's binary.

package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/app/plan"
	"github.com/migadvisor/migadvisor/advisor/app/savings"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/internal/progress"
)

func planCommand() *cli.Command {
	return &cli.Command{
		Name:        "plan",
		Usage:       "for admins: which GPUs to cut into which MIG slices, from the site's own demand",
		Description: helpText("plan"),
		Flags: append(periodFlags(),
			&cli.IntFlag{Name: "gpus", Usage: "the site's GPUs, where the site file has no [[gpu_nodes]]"},
			&cli.IntFlag{Name: "gpus-per-node", Value: 4, Usage: "GPUs per node, with --gpus"},
			&cli.GenericFlag{Name: "current", Value: &repeated{}, Usage: "with --gpus, how GPUs are cut today: LAYOUT for all (3g.40gb,2g.20gb,1g.10gb,1g.10gb or full), or N:LAYOUT for N of them; repeat it", DefaultText: "full"},
			&cli.BoolFlag{Name: "from-slurm", Usage: "read today's GPUs from Slurm's nodes (scontrol show node) even where the site file lists [[gpu_nodes]]"},
			slurmBinFlag(),
			&cli.IntFlag{Name: "top", Value: 3, Usage: "layouts to show beside today's"},
			jsonFlag(),
			&cli.StringFlag{Name: "page", Usage: "write plan.md, plan.svg, mig-parted.yaml, gres.conf and slurm.conf in this directory"},
			siteStoreFlag("read the site history in MariaDB/MySQL that this option file reaches, not --db (by default the site file's [history] site_store)"),
		),
		Action: bindAction(planOptionsFrom, runPlan),
	}
}

type planOptions struct {
	Global    globalFlags
	Slurm     slurmFlags
	FromSlurm bool
	Period    history.Period
	GPUs      int
	PerNode   int
	Current   []string
	Top       int
	JSON      bool
	Page      string
	SiteStore string
}

func planOptionsFrom(c *cli.Context) (planOptions, error) {
	o := planOptions{Global: globalFlagsFrom(c), Slurm: slurmFlagsFrom(c), FromSlurm: c.Bool("from-slurm"), GPUs: c.Int("gpus"), PerNode: c.Int("gpus-per-node"), Current: c.Generic("current").(*repeated).values,
		Top: c.Int("top"), JSON: c.Bool("json"), Page: c.String("page"), SiteStore: c.String("site-store")}
	if c.NArg() > 0 {
		return o, usageError{"plan takes no arguments: its flags select the jobs (--since, --until, --month) and the GPUs (--gpus, --current)"}
	}
	var err error
	if o.Period, err = reportPeriod(c, time.Now()); err != nil {
		return o, err
	}
	switch {
	case c.IsSet("gpus") && o.GPUs < 1:
		return o, usageError{fmt.Sprintf("--gpus %d: give the site's number of GPUs, 1 or more", o.GPUs)}
	case c.IsSet("gpus-per-node") && o.PerNode < 1:
		return o, usageError{fmt.Sprintf("--gpus-per-node %d: give the GPUs of one node, 1 or more", o.PerNode)}
	case o.GPUs == 0 && (c.IsSet("current") || c.IsSet("gpus-per-node")):
		return o, usageError{"--current and --gpus-per-node describe the GPUs --gpus counts: give --gpus with them"}
	case o.GPUs > 0 && o.FromSlurm:
		return o, usageError{"--gpus and --from-slurm both give today's GPUs: give one"}
	case o.Top < 1:
		return o, usageError{fmt.Sprintf("--top %d: show 1 layout or more", o.Top)}
	}
	return o, nil
}

// planJSON is plan --json: the plan, and the files --page wrote.
type planJSON struct {
	*plan.Plan
	History string   `json:"history"`
	Page    []string `json:"page_files,omitempty"`
}

func runPlan(ctx context.Context, o planOptions, w outWriters) error {
	defer plan.LimitMemory()()
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	today, err := plan.Today(ctx, plan.FleetSource{Site: site, GPUs: o.GPUs, PerNode: o.PerNode, Current: o.Current,
		FromSlurm: o.FromSlurm, Slurm: o.Slurm.client()})
	if err != nil {
		return err
	}
	h, err := collect.OpenSiteHistory(ctx, o.SiteStore, site, o.Global.DB)
	if err != nil {
		return err
	}
	defer h.Close()
	peers, err := index.PeersBeside(o.Global.DB, site)
	if err != nil {
		fmt.Fprintf(w.Err, "migadvisor: scripts measured on one profile are judged without other scripts' runtimes: %v\n", err)
	}
	demand, err := plan.BuildDemand(ctx, h.Store, plan.DemandRequest{Site: site, Period: o.Period,
		Thresholds: savings.ThresholdsFor(site, nil, nil), Peers: savings.Request{Peers: peers.Except},
		Progress: progress.Steps(w.Err, "sizing the jobs")})
	if err != nil {
		return err
	}
	p, err := plan.Make(plan.Request{Site: site, Today: today, Demand: demand, Search: plan.Options{Top: o.Top}})
	if err != nil {
		return err
	}
	out := planJSON{Plan: p, History: h.From}
	if o.Page != "" {
		if out.Page, err = p.WritePage(o.Page); err != nil {
			return err
		}
	}
	if o.JSON {
		return writeJSON(w.Out, out)
	}
	if err := p.WriteText(w.Out); err != nil {
		return err
	}
	for _, f := range out.Page {
		fmt.Fprintf(w.Out, "wrote %s\n", f)
	}
	return nil
}

// repeated is a flag given once per value, each kept whole: a layout's
// commas are its own, not separators between values.
type repeated struct{ values []string }

func (r *repeated) Set(v string) error { r.values = append(r.values, v); return nil }
func (r *repeated) String() string {
	if r == nil {
		return ""
	}
	return strings.Join(r.values, " ")
}
