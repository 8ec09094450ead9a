package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/advisor/base/session"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

func recommendCommand() *cli.Command {
	return &cli.Command{
		Name:        "recommend",
		Usage:       "name the profile to use for a job, with the evidence and the reasons",
		ArgsUsage:   "JOB.sh | --session NAME",
		Description: helpText("recommend"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "objective", Value: advisor.ObjectiveSU, EnvVars: []string{"MIGADVISOR_OBJECTIVE"},
				Usage: "what to minimise: su (service units, per unit of work when known), time (runtime), turnaround (queue wait + runtime)"},
			&cli.Float64Flag{Name: "max-slowdown", DefaultText: "no limit", Usage: "leave out profiles more than this many times slower than the fastest"},
			&cli.Float64Flag{Name: "tolerance", DefaultText: "the site's, else 0.05", Usage: "prefer a smaller profile whose SU is within this share of the lowest"},
			&cli.StringFlag{Name: "prior", Usage: "with no history, judge from this reference benchmark (default: recognised from the script)"},
			&cli.StringFlag{Name: "wait-since", Value: "30d", Usage: "queue waits from jobs submitted since (a date or a duration such as 30d)"},
			&cli.StringFlag{Name: "session", Usage: "judge your interactive sessions of this job name (salloc, srun --pty, " +
				"Open OnDemand's sys/dashboard/sys/jupyter), not a script"},
			jsonFlag(),
		}, probeFlags()...),
		Action: bindAction(recommendOptionsFrom, runRecommend),
	}
}

// recommendOptions are recommend's flags and argument.
type recommendOptions struct {
	Global    globalFlags
	Slurm     slurmFlags
	path      string // JOB.sh, as the user named it
	advice    advisor.Options
	prior     string    // --prior: a reference benchmark's name; "": recognised
	waitSince time.Time // queue waits from jobs submitted since
	json      bool
	probe     probeOptions
	user      string           // who asks: their runs are the monthly rate
	session   string           // --session: the job name of the sessions to judge; "": a script
	now       func() time.Time // the clock: read after the probe, which takes minutes
}

// addsRuns: recommend --probe measures (sweep, submit, wait, collect); a
// plain recommend only reads, and must stay fast.
func (o recommendOptions) addsRuns() bool { return o.probe.enabled }

func recommendOptionsFrom(c *cli.Context) (recommendOptions, error) {
	if c.IsSet("session") {
		return sessionOptionsFrom(c)
	}
	path, err := oneArg(c, "JOB.sh")
	if err != nil {
		return recommendOptions{}, err
	}
	opt := recommendOptions{Global: globalFlagsFrom(c), Slurm: slurmFlagsFrom(c), path: path, prior: c.String("prior"), json: c.Bool("json"),
		advice: advisor.Options{Objective: c.String("objective"), MaxSlowdown: c.Float64("max-slowdown"), SUTolerance: c.Float64("tolerance")},
		user:   currentUserName(), now: time.Now}
	if err := checkAdvice(opt.advice, c.IsSet("tolerance")); err != nil {
		return opt, err
	}
	if opt.waitSince, err = parseSince(c.String("wait-since"), opt.now()); err != nil {
		return opt, usageError{"--wait-since: " + err.Error()}
	}
	opt.probe, err = probeOptionsFrom(c)
	return opt, err
}

// sessionOptionsFrom reads recommend --session NAME: a job name, no script
// and no probe (a session cannot be submitted again).
func sessionOptionsFrom(c *cli.Context) (recommendOptions, error) {
	opt := recommendOptions{Global: globalFlagsFrom(c), Slurm: slurmFlagsFrom(c), session: c.String("session"), json: c.Bool("json"),
		user: currentUserName()}
	switch {
	case opt.session == "":
		return opt, usageError{"--session needs " + sessionNeedsName}
	case strings.HasPrefix(opt.session, "-"):
		// recommend --session --json: the flag was taken for the name.
		return opt, usageError{fmt.Sprintf("--session needs %s, not the flag %s", sessionNeedsName, opt.session)}
	case c.NArg() > 0:
		return opt, usageError{"recommend --session takes no JOB.sh: sessions have no script"}
	case c.Bool("probe"):
		return opt, usageError{"--probe submits a script's variants: a session has none to submit"}
	case probeOnlyFlagGiven(c) != "":
		return opt, usageError{fmt.Sprintf("--%s changes what the probe does, and a session has no script to probe", probeOnlyFlagGiven(c))}
	}
	return opt, nil
}

// checkAdvice refuses what no recommendation can be made with.
func checkAdvice(a advisor.Options, toleranceSet bool) error {
	if !slices.Contains(advisor.Objectives, a.Objective) {
		return usageError{fmt.Sprintf("--objective must be one of %s, not %q", strings.Join(advisor.Objectives, ", "), a.Objective)}
	}
	if a.MaxSlowdown != 0 && a.MaxSlowdown < 1 {
		return usageError{fmt.Sprintf("--max-slowdown is a factor of at least 1 (2: up to twice as slow), not %g", a.MaxSlowdown)}
	}
	if toleranceSet && (a.SUTolerance < 0 || a.SUTolerance >= 1) {
		return usageError{fmt.Sprintf("--tolerance is a share between 0 and 1 (0.05: 5%%), not %g", a.SUTolerance)}
	}
	return nil
}

func runRecommend(ctx context.Context, opt recommendOptions, w outWriters) error {
	env := newEnv(opt.Global, opt.Slurm, w)
	site, err := env.site()
	if err != nil {
		return err
	}
	if opt.session != "" {
		return runRecommendSession(ctx, opt, env, site)
	}
	script, err := slurm.ReadScript(opt.path)
	if err != nil {
		return err
	}
	if opt.probe.enabled {
		if err := runProbe(ctx, opt.probe, env, site, script); err != nil {
			return err
		}
	}
	req := advisor.AdviseRequest{Path: opt.path, Script: script, Site: site, UserDB: opt.Global.DB, User: opt.user, Now: opt.now(),
		WaitsSince: opt.waitSince, Options: opt.advice, Prior: opt.prior, SubmitDir: workingDir(), Peers: peersBeside(opt.Global.DB, site)}
	rec, err := advisor.Advise(ctx, req, adviseDeps(env))
	if err != nil {
		return priorUsage(err)
	}
	if opt.json {
		err = writeJSON(env.Out, rec)
	} else {
		rec.WriteText(env.Out)
	}
	if err == nil && rec.Refused {
		return silentExit(exitFailure) // the notes name the errors sbatch would refuse it for
	}
	return err
}

// runRecommendSession judges the user's sessions of a job name, from their
// history and the site's.
func runRecommendSession(ctx context.Context, opt recommendOptions, env commandEnv, site *catalog.Site) error {
	hs, err := advisor.Histories(ctx, advisor.HistoriesRequest{UserDB: opt.Global.DB, Site: site}, readHistories(env.Err))
	if err != nil {
		return err
	}
	defer hs.Close()
	if hs.Warning != "" {
		fmt.Fprintf(env.Err, "migadvisor: %s\n", hs.Warning)
	}
	adv, err := session.Advise(ctx, session.Request{Name: opt.session, User: opt.user, Site: site}, hs.Own, hs.SiteWide...)
	if err != nil {
		return err
	}
	if opt.json {
		return writeJSON(env.Out, adv)
	}
	adv.WriteText(env.Out)
	return nil
}

// adviseDeps reach the histories on disk and Slurm, and say on stderr what
// the advice goes on without.
func adviseDeps(env commandEnv) advisor.AdviseDeps {
	return advisor.AdviseDeps{
		Open:   readHistories(env.Err),
		Starts: bench.SlurmStarts{Client: env.client()},
		Warn:   func(msg string) { fmt.Fprintf(env.Err, "migadvisor: %s\n", msg) },
	}
}

// peersBeside reads the peers of the advice indexes, as the sbatch wrapper
// does (index.PeersBeside).
func peersBeside(db string, site *catalog.Site) func(string) ([]runmodel.Peer, error) {
	return func(fingerprint string) ([]runmodel.Peer, error) {
		set, err := index.PeersBeside(db, site)
		return set.Except(fingerprint), err
	}
}

// priorUsage words a --prior the site has no benchmark for: a usage error
// where the site has others to name.
func priorUsage(err error) error {
	var pe *advisor.PriorError
	switch {
	case !errors.As(err, &pe):
		return err
	case len(pe.Known) == 0:
		return fmt.Errorf("site %s has no reference benchmarks for --prior", pe.Site)
	}
	return usageError{"--prior " + pe.Error()}
}
