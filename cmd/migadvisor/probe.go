package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// probeFlags are recommend's flags for measuring before advising. Their
// names are sweep's and wait's, whose code the probe runs.
func probeFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.BoolFlag{Name: "probe", Usage: "measure first: sweep, submit, wait, collect, then recommend"},
		&cli.BoolFlag{Name: "ladder", Usage: "with --probe: one profile at a time from the smallest, until one completes without an OOM"},
		&cli.StringFlag{Name: "profiles", Usage: "with --probe: comma-separated profiles (default: all of the site's)"},
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "with --probe: directory for the variants (default: migadvisor-probe-JOB-TIME)"},
		&cli.StringFlag{Name: "workload", Usage: "with --probe: tag the jobs with a workload name"},
		asOneGPUFlag("with --probe: "),
		timeFlag("with --probe: "),
	}, measureFlags("with --probe: ")...)
}

// measureFlags are the flags of the measuring loop (submit, wait, collect)
// that recommend --probe and bench run share; prefix begins each usage.
func measureFlags(prefix string) []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "timeout", Usage: prefix + "give up waiting after this long (0: never)"},
		&cli.DurationFlag{Name: "poll", Value: 15 * time.Second, Usage: prefix + "longest interval between squeue calls"},
		&cli.BoolFlag{Name: "no-monitor", Usage: prefix + "variants without the GPU memory monitor"},
		&cli.StringFlag{Name: "monitor-bin", EnvVars: []string{"MIGADVISOR_MONITOR_BIN"},
			Usage: prefix + "the monitor binary the jobs run (default: migadvisor-monitor beside this binary, else this binary)"},
		&cli.StringSliceFlag{Name: "outputs", Usage: prefix + "directory with job output files (repeatable)"},
		clusterFlag(),
		slurmBinFlag(),
	}
}

// probe measures the script on the chosen profiles: all at once, or as a
// ladder from the smallest that stops at the first clean completion.
func probe(c *cli.Context, site *catalog.Site, script *slurm.Script) error {
	out := c.String("out")
	if out == "" {
		base := strings.TrimSuffix(filepath.Base(script.Path), filepath.Ext(script.Path))
		out = fmt.Sprintf("migadvisor-probe-%s-%s", base, time.Now().Format("20060102-150405"))
	}
	profiles, err := probeProfiles(c, site)
	if err != nil {
		return err
	}
	if !c.Bool("ladder") {
		_, err := probeRung(c, site, script, out, profiles)
		return err
	}
	for i, p := range profiles {
		ended, err := probeRung(c, site, script, filepath.Join(out, p), []string{p})
		if err != nil {
			return err
		}
		done, err := completedOn(c, script.Fingerprint(), p)
		if err != nil || done || i == len(profiles)-1 {
			return err
		}
		// A failure that is not about the GPU would only repeat higher up.
		for id, o := range ended {
			if o.AnyProfile {
				fmt.Fprintf(c.App.ErrWriter, "migadvisor: probe stopped at %s, since a larger profile would fail the same way: job %s %s\n", p, id, o.Text)
				return nil
			}
		}
		progressf(c, "probe: %s did not complete cleanly; trying the next profile", p)
	}
	return nil
}

// probeProfiles are --profiles, else the site's, from the smallest.
func probeProfiles(c *cli.Context, site *catalog.Site) ([]string, error) {
	var all []string
	for _, p := range advisor.OrderedProfiles(site) {
		all = append(all, p.Name)
	}
	v := c.String("profiles")
	if v == "" {
		return all, nil
	}
	var chosen []string
	for _, name := range all { // in size order, whatever the order given
		if slices.Contains(splitList(v), name) {
			chosen = append(chosen, name)
		}
	}
	for _, name := range splitList(v) {
		if !slices.Contains(all, name) {
			return nil, usageError{fmt.Sprintf("--profiles: %q is not a profile of %s (%s)", name, site.Name, strings.Join(all, ", "))}
		}
	}
	return chosen, nil
}

// probeRung writes, submits, waits for and collects the variants of some
// profiles, and says how each job ended.
func probeRung(c *cli.Context, site *catalog.Site, script *slurm.Script, dir string, profiles []string) (map[string]advisor.Outcome, error) {
	limit, err := variantTime(c)
	if err != nil {
		return nil, err
	}
	sw, err := writeSweep(c, bench.SweepOptions{Script: script, Site: site, Profiles: profiles, OutDir: dir, Monitor: monitorWrap(c),
		AsOneGPU: c.Bool("as-one-gpu"), Time: limit}, "fix them first")
	if err != nil {
		return nil, err
	}
	if err := submitSweep(c, dir, sw, c.String("workload")); err != nil {
		return nil, err
	}
	var ids []string
	for _, p := range sw.Profiles {
		ids = append(ids, sw.Variants[p].JobID)
		progressf(c, "probe: %s submitted as job %s (%s)", p, sw.Variants[p].JobID, filepath.Join(dir, sw.Variants[p].File))
	}
	if err := waitQueue(c, ids); err != nil {
		return nil, err
	}
	tracked, err := collectEnded(c, ids)
	if err != nil {
		return nil, err
	}
	outcomes, err := explainTracked(c, tracked)
	if err != nil {
		return nil, err
	}
	ended := map[string]advisor.Outcome{}
	for _, t := range tracked {
		o := trackedOutcome(t, outcomes)
		switch o.Kind {
		case "":
			progressf(c, "probe: job %s on %s ended %s", t.JobID, t.Profile, summaryState(t.Jobs))
		case advisor.OutcomeCompleted:
			progressf(c, "probe: job %s on %s %s", t.JobID, t.Profile, o.Text)
		default:
			progressf(c, "probe: job %s on %s ended %s: %s", t.JobID, t.Profile, summaryState(t.Jobs), o.Text)
		}
		ended[t.JobID] = o
	}
	return ended, nil
}

// completedOn reports whether the script has a clean completed run on a profile.
func completedOn(c *cli.Context, fingerprint, profile string) (bool, error) {
	st, err := openHistory(c)
	if err != nil {
		return false, err
	}
	defer st.Close()
	recs, err := st.History(c.Context, history.HistoryFilter{Fingerprint: fingerprint})
	if err != nil {
		return false, err
	}
	for i := range recs {
		if r, ok := advisor.RunFromRecord(&recs[i]); ok && r.Profile == profile && r.Completed {
			return true, nil
		}
	}
	return false, nil
}

// progressf reports a step of a long operation on a terminal; pipes and
// scripts get only the result.
func progressf(c *cli.Context, format string, args ...any) {
	if isTTY(c.App.ErrWriter) {
		fmt.Fprintf(c.App.ErrWriter, format+"\n", args...)
	}
}
