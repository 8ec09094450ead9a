package bench

import (
	"fmt"

	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// Line says, before the first submission, what a probe submits, the most
// it can cost and where its files go.
func (plan *ProbePlan) Line() string {
	var names []string
	hours := map[float64]bool{}
	for _, j := range plan.Jobs {
		name := j.Profile
		if j.Whole {
			name += " (a whole GPU)"
		}
		names = append(names, name)
		hours[j.Hours] = true
	}
	if len(names) == 0 {
		names = plan.Profiles
	}
	var what string
	switch {
	case plan.Emulate:
		what = fmt.Sprintf("1 job on %s that runs the script once per profile (%s)", textutil.JoinAnd(names), textutil.JoinAnd(plan.Profiles))
	case plan.Ladder:
		what = fmt.Sprintf("up to %s, one profile at a time from the smallest: %s", textutil.Plural(len(plan.Profiles), "job"),
			textutil.JoinAnd(names))
	default:
		what = fmt.Sprintf("%s, one on each of %s", textutil.Plural(len(plan.Profiles), "job"), textutil.JoinAnd(names))
	}
	return fmt.Sprintf("migadvisor: probe: submitting %s; %s; variants in %s, each job's output in %s (and the monitor's summary beside it)",
		what, plan.costWords(len(hours) == 1), plan.Dir, plan.Outputs)
}

// costWords is the most the probe can cost, with the --time it is
// charged for when every job has the same (oneLimit).
func (plan *ProbePlan) costWords(oneLimit bool) string {
	if plan.Unpriced != "" {
		return fmt.Sprintf("each charged for as long as it runs; the cost has no bound: %s", plan.Unpriced)
	}
	limit := "each job's --time"
	if oneLimit && len(plan.Jobs) > 0 {
		limit = slurm.FormatSeconds(plan.Jobs[0].Hours*3600) + ", each job's --time"
		if plan.Jobs[0].TimeFrom != "--time" {
			limit = slurm.FormatSeconds(plan.Jobs[0].Hours*3600) + ", the partition's limit (the script has no --time)"
		}
	}
	return fmt.Sprintf("at most %s SU if every job runs for all of %s", catalog.FormatSU(plan.MaxSU), limit)
}

// ProbeEventLine is the line that tells of a probe's event, "" for none (a
// look at the queue is wait's bar). always: the user must know it off a
// terminal too (what the probe spends, a ladder that stops early, a
// record that could not be kept); the other steps are said on a terminal
// alone.
func ProbeEventLine(e ProbeEvent) (line string, always bool) {
	switch e.Kind {
	case ProbeStarting:
		return e.Plan.Line(), true
	case ProbeSubmitted:
		return fmt.Sprintf("probe: %s submitted as job %s (%s)", e.Profile, e.JobID, e.File), false
	case ProbeJobEnded:
		switch e.Outcome.Kind {
		case "":
			return fmt.Sprintf("probe: job %s on %s ended %s", e.JobID, e.Profile, e.State), false
		case outcome.Completed:
			return fmt.Sprintf("probe: job %s on %s %s", e.JobID, e.Profile, e.Outcome.Text), false
		}
		return fmt.Sprintf("probe: job %s on %s ended %s: %s", e.JobID, e.Profile, e.State, e.Outcome.Text), false
	case ProbeNextRung:
		return fmt.Sprintf("probe: %s did not complete cleanly; trying the next profile", e.Profile), false
	case ProbeStopped:
		return fmt.Sprintf("migadvisor: probe stopped at %s, since a larger profile would fail the same way: job %s %s",
			e.Profile, e.JobID, e.Outcome.Text), true
	case ProbeWarning:
		return warningLine(e.Err), true
	}
	return "", false
}
