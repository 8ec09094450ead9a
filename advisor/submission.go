package advisor

import (
	"fmt"
	"math"
	"strings"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// SubmitAdvice is what the sbatch wrapper tells a user at submission: a
// cheaper profile that is safe for this script, or a safe one instead of a
// profile it has run out of memory on, and the settings that ask for it.
type SubmitAdvice struct {
	Profile  string          // the recommended profile
	Message  string          // one sentence, without the "migadvisor: " prefix
	Settings []slurm.Setting // what to change on the command line
}

// Use is the change as the user would type it: "--gres=gpu:a100_20g:1 --time=2:00:00".
func (a *SubmitAdvice) Use() string {
	var words []string
	for _, s := range a.Settings {
		words = append(words, slurm.ShellWord(s.String()))
	}
	return strings.Join(words, " ")
}

// ForSubmission turns a recommendation into advice at submission, or nil
// when there is nothing worth a line: no measured runs (a prior alone does
// not interrupt a user), no recommendation, the profile asked for already,
// or a recommendation that is neither cheaper nor safer than it.
func ForSubmission(site *catalog.Site, rec *Recommendation, cl *slurm.CommandLine, script *slurm.Script, env []string) (*SubmitAdvice, error) {
	fromRuns := rec.Basis == BasisMeasured || rec.Basis == BasisPredicted
	if !fromRuns || rec.Recommended == nil || rec.Requested == nil || *rec.Recommended == *rec.Requested {
		return nil, nil
	}
	asked, best := rec.profile(*rec.Requested), rec.profile(*rec.Recommended)
	profile, ok := site.Profile(*rec.Recommended)
	if asked == nil || best == nil || !ok {
		return nil, nil
	}
	var why string
	switch {
	case asked.OOMRisk == RiskHigh:
		why = fmt.Sprintf("%s %s; %s has low OOM risk", memorySummary(rec, site), asked.OOMRiskReason, best.Profile)
	case cheaper(best, asked):
		why = fmt.Sprintf("%s; %s would cost %s instead of %s", memorySummary(rec, site), best.Profile, cost(best), cost(asked))
	default:
		return nil, nil
	}
	settings, err := settingsFor(profile, best, rec, cl, script, env)
	if err != nil {
		return nil, err
	}
	return &SubmitAdvice{Profile: best.Profile, Message: why, Settings: settings}, nil
}

func (r *Recommendation) profile(name string) *ProfileAdvice {
	for i := range r.Profiles {
		if r.Profiles[i].Profile == name {
			return &r.Profiles[i]
		}
	}
	return nil
}

// cheaper compares what both profiles have figures for: SU per run (what
// the user pays for this submission), else SU per unit of work, else SU
// per hour.
func cheaper(a, b *ProfileAdvice) bool {
	switch {
	case a.SU != nil && b.SU != nil:
		return *a.SU < *b.SU
	case a.SUPerWork != nil && b.SUPerWork != nil:
		return *a.SUPerWork < *b.SUPerWork
	}
	return a.SUPerHour < b.SUPerHour
}

func cost(p *ProfileAdvice) string {
	switch {
	case p.SU != nil:
		return fmt.Sprintf("~%s SU", trimFloat(*p.SU))
	case p.SUPerWork != nil:
		return fmt.Sprintf("~%s SU per %s", trimFloat(*p.SUPerWork), p.WorkUnit)
	}
	return trimFloat(p.SUPerHour) + " SU/h"
}

// trimFloat gives an SU figure the precision a person reads: 16, 2.8,
// 0.0058 (two significant digits below 0.1, never an exponent).
func trimFloat(f float64) string {
	switch {
	case f >= 10:
		return fmt.Sprintf("%.0f", f)
	case f >= 0.1:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0")
	case f <= 0:
		return "0"
	}
	return fmt.Sprintf("%.*f", 1-int(math.Floor(math.Log10(f))), f)
}

// memorySummary says what the runs showed: "this script peaked at 5.7 GiB
// in 3 runs on a full A100".
func memorySummary(rec *Recommendation, site *catalog.Site) string {
	// Runs that ran count (cancelled before starting, they say nothing).
	var on []string
	runs := 0
	for _, p := range rec.Profiles {
		if ran := p.Completed + p.TimedOut + p.HostOOM; ran > 0 || p.OOMObserved {
			runs += max(ran, 1)
			on = append(on, profilePhrase(site, p.Profile))
		}
	}
	if rec.GPUMemNeed != nil && rec.GPUMemNeed.Runs > 0 {
		runs = rec.GPUMemNeed.Runs // the runs the figure comes from
	}
	where := fmt.Sprintf("%s on %s", plural(runs, "run"), strings.Join(on, " and "))
	if rec.GPUMemNeed == nil {
		return "this script has " + where
	}
	verb := "peaked at"
	if strings.HasPrefix(rec.GPUMemNeed.Source, "OOM") {
		verb = "needs at least" // an out-of-memory message's lower bound
	}
	return fmt.Sprintf("this script %s %.1f GiB in %s", verb, rec.GPUMemNeed.MiB/1024, where)
}

// profilePhrase names a profile as users say it: "a full A100", "1g.10gb".
func profilePhrase(site *catalog.Site, name string) string {
	if p, ok := site.Profile(name); ok && !p.IsMIG() {
		model, _, _ := strings.Cut(site.GPUModel, "-")
		if model == "" {
			model = "GPU"
		}
		return "a full " + model
	}
	return name
}

// settingsFor is the command-line change that submits the job on the
// recommended profile: its GPU request, and its partition, QoS, --time and
// --mem where the advice needs others than the job has.
func settingsFor(p *catalog.Profile, best *ProfileAdvice, rec *Recommendation, cl *slurm.CommandLine, script *slurm.Script, env []string) ([]slurm.Setting, error) {
	gpu, err := cl.GPUSetting(script, env, p.Request)
	if err != nil {
		return nil, err
	}
	settings := []slurm.Setting{gpu}
	add := func(name, value string) {
		if was, _ := cl.Effective(name, script, env); value != "" && value != was {
			settings = append(settings, slurm.Setting{Name: name, Value: value, Was: was})
		}
	}
	add("partition", best.Partition)
	add("qos", p.QoS)
	add("time", best.TimeLimit)
	add("mem", rec.Mem)
	return settings, nil
}
