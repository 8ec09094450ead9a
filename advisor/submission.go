package advisor

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
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
// when there is nothing worth a line. It speaks from the script's own runs
// only (a prior alone does not interrupt a user): a safe profile instead of
// one the job ran out of GPU memory on (also before any runtime is known),
// a clearly cheaper one, the --mem after a host OOM, or the --time after
// runs that reached their limit or took longer than the job asks for.
//
// res is what the submission asks for, cl.Resources(script, env), computed
// once by the caller (the same value its Job was recommended with).
func ForSubmission(site *catalog.Site, rec *Recommendation, cl *slurm.CommandLine, res slurm.Resources, script *slurm.Script, env []string) (*SubmitAdvice, error) {
	if rec.Runs == 0 || rec.Prior != nil || rec.Requested == nil {
		return nil, nil // a prior alone does not interrupt a user
	}
	asked := rec.Profile(*rec.Requested)
	if asked == nil {
		return nil, nil
	}
	var best *ProfileAdvice
	if rec.Recommended != nil {
		best = rec.Profile(*rec.Recommended)
	}
	var why string
	target := asked
	var probe *ProfileAdvice // a cheaper profile only an earlier version completed on
	if best == nil {
		probe = rec.cheaperToProbe(asked)
	}
	switch {
	case asked.OOMRisk == memory.RiskHigh && rec.safeFor(asked) != nil:
		// Also with nothing recommended yet (no runtime known): a job that
		// ran out of memory here will again.
		target = rec.safeFor(asked)
		why = fmt.Sprintf("%s; %s", unsafeWords(rec, site, asked), fitsWords(rec, target))
	case asked.OOMRisk == memory.RiskHigh && asked.OOMObserved:
		// Nothing bigger to take: say so, with nothing to change.
		why = fmt.Sprintf("%s, and no profile has more memory: reduce its memory use (batch size, precision)", unsafeWords(rec, site, asked))
		return &SubmitAdvice{Profile: asked.Profile, Message: why}, nil
	case best != nil && asked != best && clearlyCheaper(best, asked):
		target = best
		evidence, there := evidenceWords(rec, site, best)
		if there { // the evidence just named the cheaper profile
			why = fmt.Sprintf("%s, at %s instead of %s", evidence, cost(best), cost(asked))
		} else {
			why = fmt.Sprintf("%s; %s would cost %s instead of %s", evidence, best.Profile, cost(best), cost(asked))
		}
		if n := rec.GPUMemNeed; n == nil || n.Profile != asked.Profile {
			why += " on " + site.ProfileWords(asked.Profile) // the figure was seen elsewhere: name the one asked for
		}
	case rec.Mem != "":
		why = rec.MemReason // the wrapper adds the change: "Use --mem=8G"
	case asked.TimeLimit != "" && asked.RuntimeAtLeast && asked.TimedOut > 0:
		why = fmt.Sprintf("%s of this script on %s reached the time limit after %s",
			plural(asked.TimedOut, "run"), asked.Profile, slurm.FormatSeconds(asked.RuntimeRangeS[1]))
	case probe != nil:
		// Runs of an earlier version completed on a cheaper profile, with no
		// memory figure to vouch for this version: not enough to change the
		// job, enough to say where to look (the wrapper is otherwise silent
		// after every edit).
		why = fmt.Sprintf("%s completed on %s in %s, at %s instead of %s on %s",
			runsSubject(rec), probe.Profile, plural(probe.Completed, "run"), cost(probe), cost(asked), site.ProfileWords(asked.Profile))
		if rec.Next != "" {
			why += fmt.Sprintf("; '%s' tells whether this version fits there", rec.Next)
		}
		return &SubmitAdvice{Profile: probe.Profile, Message: why}, nil
	case asked == best && best.TimeLimit != "" && best.RuntimeRuns > 0:
		// Measured runs only: a predicted time does not interrupt a user.
		why = fmt.Sprintf("%s of this script on %s took up to %s, more than this job's --time=%s",
			plural(best.RuntimeRuns, "run"), best.Profile, slurm.FormatSeconds(best.RuntimeRangeS[1]), res.Time)
	default:
		return nil, nil
	}
	if target != asked && rec.Mem != "" {
		why += "; and " + rec.MemReason
	}
	profile, _ := site.Profile(target.Profile)
	settings, err := settingsFor(profile, target != asked, target, rec, cl, res, script, env)
	if err != nil {
		return nil, err
	}
	return &SubmitAdvice{Profile: target.Profile, Message: why, Settings: settings}, nil
}

// fitsWords says why the profile to take is safe: "2g.20gb, with 19.5 GiB,
// fits the 10.9 GiB it needs", or where it completed.
func fitsWords(rec *Recommendation, p *ProfileAdvice) string {
	if n := rec.GPUMemNeed; n != nil && !strings.HasPrefix(p.OOMRiskReason, "completed") {
		return fmt.Sprintf("%s, with %s, fits the %s it needs", p.Profile, memory.FormatMiB(p.UsableMiB), memory.FormatMiB(n.MiB))
	}
	return fmt.Sprintf("%s has low OOM risk: %s", p.Profile, strings.Replace(p.OOMRiskReason, "completed here", "it completed there", 1))
}

// safeFor is the profile to take instead of one the job is not safe on:
// the recommended one, else the smallest with low OOM risk that can run it.
func (r *Recommendation) safeFor(asked *ProfileAdvice) *ProfileAdvice {
	if r.Recommended != nil && *r.Recommended != asked.Profile {
		return r.Profile(*r.Recommended)
	}
	for i := range r.Profiles {
		if p := &r.Profiles[i]; p.OOMRisk == memory.RiskLow && p.excluded == "" && p != asked {
			return p
		}
	}
	return nil
}

// unsafeWords says why the profile asked for is not safe: the job ran out
// of GPU memory there (or on a bigger one), or needs more than it has.
func unsafeWords(rec *Recommendation, site *catalog.Site, asked *ProfileAdvice) string {
	subject := "this script"
	if n := rec.GPUMemNeed; n != nil && n.Earlier {
		subject = "an earlier version of this script"
	}
	var bigger *ProfileAdvice // the biggest profile where it ran out of memory
	for i := range rec.Profiles {
		if p := &rec.Profiles[i]; p.OOMObserved && p.UsableMiB > asked.UsableMiB {
			bigger = p
		}
	}
	switch {
	case asked.OOMObserved:
		return fmt.Sprintf("%s ran out of GPU memory on %s, the profile this job asks for", subject, asked.Profile)
	case bigger != nil:
		return fmt.Sprintf("%s ran out of GPU memory on %s, which has more memory than the %s this job asks for", subject, bigger.Profile, asked.Profile)
	case rec.GPUMemNeed != nil:
		return fmt.Sprintf("%s, more than the %s of %s this job asks for", memoryWords(rec, site), memory.FormatMiB(asked.UsableMiB), asked.Profile)
	}
	return fmt.Sprintf("%s has high OOM risk for this script: %s", asked.Profile, asked.OOMRiskReason)
}

// cheaperToProbe is the smallest profile clearly cheaper than asked where
// the script's runs completed but its OOM risk is not low (runs of an
// earlier version, without a memory figure): worth a probe, not a change.
func (r *Recommendation) cheaperToProbe(asked *ProfileAdvice) *ProfileAdvice {
	for i := range r.Profiles {
		p := &r.Profiles[i]
		if p != asked && p.Completed > 0 && p.OOMRisk == memory.RiskMedium && p.excluded == "" && clearlyCheaper(p, asked) {
			return p
		}
	}
	return nil
}

// runsSubject names whose runs the advice rests on.
func runsSubject(r *Recommendation) string {
	if r.Runs > 0 && r.EarlierRuns == r.Runs {
		return "an earlier version of this script"
	}
	return "this script"
}

// clearlyCheaper reports whether a is cheaper than b by more than the
// run-to-run noise of their figures (a saving within the noise is not worth
// interrupting a submission for), comparing what both have figures for: SU
// per run (what the user pays for this submission), else SU per unit of
// work, else SU per hour.
func clearlyCheaper(a, b *ProfileAdvice) bool {
	margin := 1 + max(noise(a), noise(b))
	switch {
	case a.SU != nil && b.SU != nil:
		return *a.SU*margin < *b.SU
	case a.SUPerWork != nil && b.SUPerWork != nil:
		return *a.SUPerWork*margin < *b.SUPerWork
	}
	return a.SUPerHour*margin < b.SUPerHour
}

func cost(p *ProfileAdvice) string {
	switch {
	case p.SU != nil:
		return fmt.Sprintf("~%s SU", catalog.FormatSU(*p.SU))
	case p.SUPerWork != nil:
		return fmt.Sprintf("~%s SU per %s", catalog.FormatSU(*p.SUPerWork), p.WorkUnit)
	}
	return catalog.FormatSU(p.SUPerHour) + " SU/h"
}

// evidenceWords says why the cheaper profile is safe: the job's memory
// figure, else its completions there; there reports whether the words end
// by naming that profile, so the sentence that follows need not again.
func evidenceWords(rec *Recommendation, site *catalog.Site, best *ProfileAdvice) (words string, there bool) {
	n := cmp.Or(rec.GPUMemNeed, rec.GPUMemCeiling)
	if n == nil && best.Completed > 0 {
		return fmt.Sprintf("this script completed on %s in %s", best.Profile, plural(best.Completed, "run")), true
	}
	return memoryWords(rec, site), n != nil && n.Kind != memory.NeedOOM && n.Profile == best.Profile
}

// memoryWords says what the runs showed of the job's GPU memory, and which
// runs showed it: "its 2 runs on 1g.10gb peaked at 0.6 GiB of GPU memory".
// A peak that is only a ceiling of the need (a framework's, a Python
// program's) is what judged the profile where no need is known: it is
// said as the peak it was.
func memoryWords(rec *Recommendation, site *catalog.Site) string {
	n := cmp.Or(rec.GPUMemNeed, rec.GPUMemCeiling)
	if n == nil {
		return fmt.Sprintf("this script has %s with no GPU memory figure", plural(rec.Runs, "run"))
	}
	subject := "this script"
	if n.Earlier {
		subject = "an earlier version of this script"
	}
	runs := fmt.Sprintf("in %s on %s", plural(n.OnProfile, "run"), site.ProfileWords(n.Profile))
	switch n.Kind {
	case memory.NeedAllocated:
		return fmt.Sprintf("%s allocated at most %s of GPU memory %s", subject, memory.FormatMiB(n.SeenMiB), runs)
	case memory.NeedOOM:
		return fmt.Sprintf("%s needed at least %s of GPU memory when it ran out on %s", subject, memory.FormatMiB(n.SeenMiB), n.Profile)
	}
	return fmt.Sprintf("%s peaked at %s of GPU memory %s", subject, memory.FormatMiB(n.SeenMiB), runs)
}

// settingsFor is the command-line change that submits the job on the
// recommended profile: its GPU request when it is another profile, and its
// partition, QoS, --time and --mem where the advice needs others than the
// job has. res: what the job asks for (cl.Resources(script, env)).
func settingsFor(p *catalog.Profile, otherGPU bool, best *ProfileAdvice, rec *Recommendation, cl *slurm.CommandLine, res slurm.Resources, script *slurm.Script, env []string) ([]slurm.Setting, error) {
	var settings []slurm.Setting
	if otherGPU {
		gpu, err := cl.GPUSetting(res, script, env, p.Request)
		if err != nil {
			return nil, err
		}
		settings = append(settings, gpu)
	}
	add := func(name, value string) {
		if was, _ := cl.Effective(name, script, env); value != "" && value != was {
			settings = append(settings, slurm.Setting{Name: name, Value: value, Was: was})
		}
	}
	if otherGPU { // the job's own profile: its partition and QoS are the job's business
		add("partition", best.Partition)
		add("qos", p.QoS)
	}
	add("time", best.TimeLimit)
	add("mem", rec.Mem)
	return settings, nil
}
