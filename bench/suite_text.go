package bench

import (
	"cmp"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// Line says, before the first job, what a benchmark run submits and how
// long it can take.
func (plan *SuitePlan) Line() string {
	kind := "runs"
	switch {
	case plan.Quick && plan.Synthetic:
		kind = "quick runs on random data that check the setup"
	case plan.Quick:
		kind = "quick runs that check the setup"
	case plan.Synthetic:
		kind = "runs on random data"
	}
	long := ""
	if plan.Longest > 0 {
		long = ", the longest " + slurm.FormatDuration(plan.Longest)
	}
	then := "then returns: 'migadvisor wait' follows them"
	if plan.Wait {
		then = fmt.Sprintf("then waits until every job has ended, each after its wait in the queue and at most its --time%s, and collects them; "+
			"a line follows each job submitted and each that ends", long)
	}
	return fmt.Sprintf("benchmark: submitting %s (%s on %s, %s) from %s, %s",
		textutil.Plural(plan.Jobs, "job"), textutil.Plural(plan.Workloads, "workload"), textutil.JoinAnd(plan.Profiles), kind, plan.Dir, then)
}

// SuiteEventLine is the line that tells of a benchmark run's event: what
// it is about to do, each job submitted, how many have ended (a look at
// the queue) and the records that could not be kept; "" for the others.
func SuiteEventLine(e ProbeEvent) string {
	switch e.Kind {
	case SuiteStarting:
		return e.Suite.Line()
	case ProbeSubmitted:
		return fmt.Sprintf("benchmark: %s on %s submitted as job %s", e.Workload, e.Profile, e.JobID)
	case ProbeQueue:
		return fmt.Sprintf("benchmark: %d of %s ended (%d running, %d pending)", e.Queue.Done, textutil.Plural(e.Queue.Total, "job"),
			e.Queue.Running, e.Queue.Pending)
	case ProbeWarning:
		return warningLine(e.Err)
	}
	return ""
}

// warningLine tells of something the history lacks, which stops nothing.
func warningLine(err error) string { return fmt.Sprintf("migadvisor: warning: %v", err) }

// WarningsTo says a sweep's warnings on w, a line each, and nothing of its
// progress.
func WarningsTo(w io.Writer) func(ProbeEvent) {
	return func(e ProbeEvent) {
		if e.Kind == ProbeWarning {
			fmt.Fprintln(w, warningLine(e.Err))
		}
	}
}

// WriteSuiteJobs writes a suite's jobs as a table, a dash for a state not
// collected.
func WriteSuiteJobs(w io.Writer, jobs []SuiteJob) error {
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "WORKLOAD\tPROFILE\tJOB ID\tSTATE\tSCRIPT")
	for _, j := range jobs {
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\n", j.Workload, j.Profile, j.JobID, cmp.Or(j.State, "-"), j.Script)
	}
	return t.Flush()
}
