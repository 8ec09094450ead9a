package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/index"
	"github.com/migadvisor/migadvisor/advisor/memory"
	"github.com/migadvisor/migadvisor/advisor/runmodel"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

func recommendCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:        "recommend",
		Usage:       "name the profile to use for a job, with the evidence and the reasons",
		ArgsUsage:   "JOB.sh",
		Description: helpText("recommend"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "objective", Value: advisor.ObjectiveSU, EnvVars: []string{"MIGADVISOR_OBJECTIVE"},
				Usage: "what to minimise: su (service units, per unit of work when known), time (runtime), turnaround (queue wait + runtime)"},
			&cli.Float64Flag{Name: "max-slowdown", DefaultText: "no limit", Usage: "leave out profiles more than this many times slower than the fastest"},
			&cli.Float64Flag{Name: "tolerance", DefaultText: "the site's, else 0.05", Usage: "prefer a smaller profile whose SU is within this share of the lowest"},
			&cli.StringFlag{Name: "prior", Usage: "with no history, judge from this reference benchmark (default: recognised from the script)"},
			&cli.StringFlag{Name: "wait-since", Value: "30d", Usage: "queue waits from jobs submitted since (a date or a duration such as 30d)"},
			jsonFlag(),
		}, probeFlags()...),
		Action: bindAction(recommendOptionsFrom, runRecommend),
	})
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
	now       func() time.Time // the clock: read after the probe, which takes minutes
}

// addsRuns: recommend --probe measures (sweep, submit, wait, collect); a
// plain recommend only reads, and must stay fast.
func (o recommendOptions) addsRuns() bool { return o.probe.enabled }

func recommendOptionsFrom(c *cli.Context) (recommendOptions, error) {
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
		return writeJSON(env.Out, rec)
	}
	printRecommendation(env.Out, rec)
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

// needCell is the GPU memory need as its evidence proves it: a figure, at
// least an out-of-memory's bound (≥), at most a ceiling (≤), or between.
func needCell(rec *advisor.Recommendation, pa advisor.ProfileAdvice) string {
	need, ceiling := pa.GPUMemNeedMiB, pa.GPUMemCeilingMiB
	lower := need != nil && rec.GPUMemNeed != nil && rec.GPUMemNeed.Kind == memory.NeedOOM
	switch {
	case need != nil && ceiling != nil && lower:
		return strings.TrimSuffix(mibOrDash(need), "G") + "-" + mibOrDash(ceiling)
	case need == nil && ceiling != nil:
		return "≤" + mibOrDash(ceiling)
	case lower:
		return "≥" + mibOrDash(need)
	}
	return mibOrDash(need)
}

func printRecommendation(w io.Writer, rec *advisor.Recommendation) {
	if rec.CPUOnly { // no profile was judged: a table of dashes says nothing
		fmt.Fprintf(w, "%s on %s: no recommendation: %s\n", rec.Script, rec.Site, rec.Reason)
		return
	}
	fmt.Fprintf(w, "%s on %s: %s\n", rec.Script, rec.Site, evidenceWords(rec))
	t := newTable(w)
	workUnit := ""
	for _, pa := range rec.Profiles {
		if pa.WorkUnit != "" {
			workUnit = pa.WorkUnit
		}
	}
	header := "PROFILE\tRUNS\tOUTCOME\tGPU NEED/USABLE\tOOM RISK\tRUNTIME\tSU"
	if workUnit != "" {
		header += "\tSU/" + workUnit
	}
	fmt.Fprintln(t, header)
	for _, pa := range rec.Profiles {
		mark := " "
		if rec.Recommended != nil && *rec.Recommended == pa.Profile {
			mark = "*"
		}
		fmt.Fprintf(t, "%s%s\t%s\t%s\t%s/%s\t%s\t%s\t%s", mark, pa.Profile, runsCell(rec, pa), outcomeCell(pa), needCell(rec, pa),
			mibOrDash(&pa.UsableMiB), pa.OOMRisk, runtimeText(pa), suCell(pa))
		if workUnit != "" {
			fmt.Fprintf(t, "\t%s", suPerWorkCell(pa))
		}
		fmt.Fprintln(t)
	}
	t.Flush()
	if rec.Recommended != nil {
		fmt.Fprintf(w, "\nrecommend %s: %s\n", *rec.Recommended, rec.Reason)
	} else {
		fmt.Fprintf(w, "\nno recommendation: %s\n", rec.Reason)
	}
	printChange(w, rec)
	if why := runtimeWhy(rec); why != "" {
		fmt.Fprintln(w, why)
	}
	if rec.Next != "" {
		fmt.Fprintf(w, "next: %s\n", rec.Next)
	}
	for _, n := range rec.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// runtimeWhy is what the table's predicted runtimes rest on, as a line, or
// "" when none was predicted (a profile with no runtime says why in its
// reason).
func runtimeWhy(rec *advisor.Recommendation) string {
	for _, pa := range rec.Profiles {
		if pa.RuntimeSource == advisor.BasisPredicted {
			return "runtimes predicted: " + rec.RuntimeWhy
		}
	}
	return ""
}

// evidenceWords says what the advice rests on, in the words the table uses.
// "basis: none" is left out where the script has runs: nothing was
// recommended, and the line that says why follows the table.
func evidenceWords(rec *advisor.Recommendation) string {
	basis := "; basis: " + rec.Basis
	if rec.Basis == advisor.BasisNone && rec.Runs > 0 {
		basis = ""
	}
	if n := rec.GPUMemNeed; n != nil && n.By != "" && rec.Prior == nil {
		basis += ", GPU memory measured (" + n.By + ")"
	}
	switch {
	case rec.Basis == advisor.BasisPrior || rec.Prior != nil:
		return fmt.Sprintf("no runs of this script yet; the figures are the %s reference benchmark's (basis: prior)", rec.Prior.Benchmark)
	case rec.Runs == 0:
		return "no runs of this script in the history" + basis
	case rec.EarlierRuns == rec.Runs:
		return fmt.Sprintf("%s of an earlier version of this script in the history%s", textutil.Plural(rec.Runs, "run"), basis)
	case rec.EarlierRuns > 0:
		return fmt.Sprintf("%s in the history, %d of them of an earlier version%s", textutil.Plural(rec.Runs, "run"), rec.EarlierRuns, basis)
	}
	return fmt.Sprintf("%s in the history%s", textutil.Plural(rec.Runs, "run"), basis)
}

// runsCell is the RUNS column: the script's runs, or "ref" for the
// reference benchmark's measurement a prior stands on.
func runsCell(rec *advisor.Recommendation, pa advisor.ProfileAdvice) string {
	if rec.Prior != nil {
		if pa.Runs > 0 {
			return "ref"
		}
		return "-"
	}
	return fmt.Sprint(pa.Runs)
}

// printChange shows the lines to change in the script and what that saves.
func printChange(w io.Writer, rec *advisor.Recommendation) {
	ch := rec.Change
	if ch == nil {
		return
	}
	switch {
	case len(ch.Lines) == 0:
		fmt.Fprintf(w, "the script already asks for %s: nothing to change\n", ch.To)
		return
	case ch.To == "":
		fmt.Fprintf(w, "change %s before you measure it:\n", rec.Script)
	default:
		fmt.Fprintf(w, "change %s:\n", rec.Script)
	}
	t := newTable(w)
	for _, l := range ch.Lines {
		switch {
		case l.Line == 0:
			fmt.Fprintf(t, "  add\t%s\n", l.New)
		case l.New == "":
			fmt.Fprintf(t, "  line %d\t%s\t(remove)\n", l.Line, l.Old)
		default:
			fmt.Fprintf(t, "  line %d\t%s\t→ %s\n", l.Line, l.Old, l.New)
		}
	}
	t.Flush()
	if s := savingsText(ch); s != "" {
		fmt.Fprintln(w, s)
	}
}

// savingsText is what the change saves, per run and at the user's rate.
func savingsText(ch *advisor.Change) string {
	if ch.SUPerRun == nil || *ch.SUPerRun == 0 {
		return ch.Because
	}
	per := *ch.SUPerRun
	if per < 0 {
		return fmt.Sprintf("it costs about %s SU a run more than %s: %s", advisor.FormatSU(-per), ch.Asks, ch.Because)
	}
	text := fmt.Sprintf("saves about %s SU a run against %s", advisor.FormatSU(per), ch.Asks)
	if ch.SUPerMonth != nil {
		text += fmt.Sprintf("; at your rate of %s in 30 days, about %s SU a month", textutil.Plural(ch.RunsPerMonth, "run"), advisor.FormatSU(*ch.SUPerMonth))
	}
	if ch.Because != "" {
		text += " (" + ch.Because + ")"
	}
	return text
}

func outcomeCell(pa advisor.ProfileAdvice) string {
	var parts []string
	if pa.Completed > 0 {
		parts = append(parts, fmt.Sprintf("%d ok", pa.Completed))
	}
	if pa.GPUOOMs > 0 {
		parts = append(parts, fmt.Sprintf("%d OOM", pa.GPUOOMs))
	}
	if pa.TimedOut > 0 {
		parts = append(parts, fmt.Sprintf("%d timeout", pa.TimedOut))
	}
	if pa.HostOOM > 0 {
		parts = append(parts, fmt.Sprintf("%d host OOM", pa.HostOOM))
	}
	if other := pa.Runs - pa.Completed - pa.TimedOut - pa.HostOOM - pa.GPUOOMs; other > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", other))
	}
	if len(parts) == 0 {
		return "-"
	}
	if pa.Emulated != "" {
		return strings.Join(parts, ", ") + " (emulated)"
	}
	return strings.Join(parts, ", ")
}

func runtimeText(pa advisor.ProfileAdvice) string {
	if pa.RuntimeS == nil {
		return "-"
	}
	if pa.RuntimeAtLeast {
		return "≥" + slurm.FormatSeconds(*pa.RuntimeS) + " time limit"
	}
	text := slurm.FormatSeconds(*pa.RuntimeS)
	switch {
	case pa.RuntimeRuns > 1 && pa.RuntimeSpread != nil:
		text += fmt.Sprintf(" (%d runs, spread %.0f%%)", pa.RuntimeRuns, 100**pa.RuntimeSpread)
	case pa.RuntimeRuns == 1:
		text += " (1 run)"
	case pa.RuntimeSource != advisor.BasisMeasured:
		text += " " + pa.RuntimeSource
		if r := pa.RuntimeRangeS; r != nil && slurm.FormatSeconds(r[0]) != slurm.FormatSeconds(r[1]) {
			text += fmt.Sprintf(" %s–%s", slurm.FormatSeconds(r[0]), slurm.FormatSeconds(r[1]))
		}
	}
	if pa.TimeLimit != "" {
		text += ", needs --time=" + pa.TimeLimit
	}
	return text
}

// suCell is an SU figure as the JSON holds it, "≥" when only a lower bound.
func suCell(pa advisor.ProfileAdvice) string {
	if pa.SU != nil && pa.RuntimeAtLeast {
		return "≥" + advisor.FormatSU(*pa.SU)
	}
	return suOrDash(pa.SU)
}

// suPerWorkCell is SU per work, a bound where the runtime is one: the
// runtime over the job's work, so at least as much as the runtime.
func suPerWorkCell(pa advisor.ProfileAdvice) string {
	if pa.SUPerWork != nil && pa.RuntimeAtLeast {
		return "≥" + advisor.FormatSU(*pa.SUPerWork)
	}
	return suOrDash(pa.SUPerWork)
}
