package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/collect"
	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

func statusCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "status",
		Usage:     "list tracked jobs and their states",
		ArgsUsage: "[JOBID...]",
		Description: `Lists the jobs migadvisor tracks (from 'sweep --submit' and 'track'), with
their state: from squeue while Slurm still has them, else from the history.
PROFILE is the one the job asked for, else the one accounting gives.
A job that has left the queue but whose accounting record is not collected yet
shows as "ended (collect)"; an id that neither squeue nor sacct knows, as
"not in Slurm" (was it mistyped?). WHY says why an ended job did not complete, as
'migadvisor wait' does. With nothing tracked (of the ids or the sweep asked
about), it says so and how jobs become tracked; with --json, stdout holds []
and that line goes to stderr.

Examples:
   migadvisor status
   migadvisor status --sweep sweep/
   migadvisor status 4242 4243 --json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "sweep", Usage: "only the jobs of the sweep in this directory"},
			slurmBinFlag(),
			jsonFlag(),
		},
		Action: runStatus,
	})
}

// jobStatus is one tracked submission in status's output.
type jobStatus struct {
	JobID     string        `json:"job_id"`
	Cluster   string        `json:"cluster"`
	Profile   string        `json:"profile"` // asked for, else accounting's
	State     string        `json:"state"`
	Reason    string        `json:"reason,omitempty"`
	Script    string        `json:"script"`
	SweepDir  string        `json:"sweep_dir,omitempty"`
	Workload  string        `json:"workload,omitempty"`
	Submitted time.Time     `json:"submitted"`
	Jobs      []jobStateRow `json:"jobs"` // array tasks and het components
	// How it ended, once every job of it has: see advisor.Explain.
	Outcome     string `json:"outcome,omitempty"`
	Explanation string `json:"explanation,omitempty"`
}

type jobStateRow struct {
	JobID       string `json:"job_id"`
	State       string `json:"state"`
	Outcome     string `json:"outcome,omitempty"`
	Explanation string `json:"explanation,omitempty"`
}

// trackedSelection reads the tracked submissions named by ids or --sweep.
func trackedSelection(c *cli.Context, st *history.Store, ids []string) ([]history.Tracked, error) {
	f := history.TrackedFilter{JobIDs: ids}
	if dir := c.String("sweep"); dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		f.SweepDir = abs
	}
	return st.Tracked(c.Context, f)
}

func runStatus(c *cli.Context) error {
	st, err := openHistory(c)
	if err != nil {
		return err
	}
	defer st.Close()
	tracked, err := trackedSelection(c, st, c.Args().Slice())
	if err != nil {
		return err
	}
	live, warn := queueStates(c, tracked)
	if warn != nil {
		fmt.Fprintf(c.App.ErrWriter, "migadvisor: warning: states from the history only: %v\n", warn)
	}
	site, err := loadSite(c)
	if err != nil {
		site = nil // the explanations only lose the profiles' usable memory
	}
	outcomes, err := explainEnded(c, st, site, tracked)
	if err != nil {
		return err
	}
	var unknown []string
	if warn == nil {
		unknown = unknownToSlurm(c, tracked, live)
	}
	rows := make([]jobStatus, 0, len(tracked))
	for _, t := range tracked {
		r := statusOf(t, live, warn == nil, outcomes, unknown)
		if q := live[t.JobID]; r.Profile == "" && len(q) > 0 && site != nil {
			// Not collected yet: the profile its request names, as squeue shows it.
			if p, ok := site.ProfileForType(q[0].GPUType()); ok {
				r.Profile = p.Name
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return sayEmpty(c, whyNoneTracked(c, st))
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, rows)
	}
	t := newTable(c.App.Writer)
	fmt.Fprintln(t, "JOB ID\tPROFILE\tSTATE\tSCRIPT\tSUBMITTED\tWHY")
	for _, r := range rows {
		state := r.State
		if r.Reason != "" && r.Reason != "None" {
			state += " (" + r.Reason + ")"
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\n", r.JobID, orDash(r.Profile), state, filepath.Base(r.Script),
			r.Submitted.Local().Format("2006-01-02 15:04"), why(r))
	}
	return t.Flush()
}

// howTracked says how jobs become tracked.
const howTracked = "jobs are tracked when submitted with 'migadvisor sweep JOB.sh --out DIR --submit', " +
	"'migadvisor recommend --probe JOB.sh' or the sbatch wrapper ('migadvisor sbatch JOB.sh'), " +
	"or linked to their script with 'migadvisor track JOB.sh JOBID...'"

// whyNoneTracked says, in one line, why status lists nothing: the history
// it read tracks no job (of the ids, or of the sweep, asked about), and how
// jobs become tracked.
func whyNoneTracked(c *cli.Context, st *history.Store) string {
	where := "the history at " + st.Path()
	ids := c.Args().Slice()
	switch dir := c.String("sweep"); {
	case len(ids) > 0:
		are, them := "is", "it"
		if len(ids) > 1 {
			are, them = "are", "them"
		}
		what := ""
		if dir != "" {
			what = " as jobs of the sweep in " + dir
		}
		words := make([]string, len(ids))
		for i, id := range ids {
			words[i] = slurm.ShellWord(id)
		}
		return fmt.Sprintf("%s %s not tracked%s in %s: 'migadvisor track JOB.sh %s' links %s to the script; %s",
			jobsNamed(ids), are, what, where, strings.Join(words, " "), them, howTracked)
	case dir != "":
		return fmt.Sprintf("%s tracks no jobs of the sweep in %s: 'migadvisor sweep JOB.sh --out %s --submit' submits its variants and tracks them",
			where, dir, slurm.ShellWord(dir))
	}
	return fmt.Sprintf("no tracked jobs in %s: %s", where, howTracked)
}

// why is a row's explanation for a table: "-" while it runs or once it completed.
func why(r jobStatus) string {
	if r.Outcome == "" || r.Outcome == advisor.OutcomeCompleted {
		return "-"
	}
	return r.Explanation
}

// explainEnded explains how each ended job of the submissions went, from
// its record in the history (site may be nil), by cluster and job key.
func explainEnded(c *cli.Context, st *history.Store, site *catalog.Site, tracked []history.Tracked) (map[[2]string]advisor.Outcome, error) {
	var keys [][2]string
	for _, t := range tracked {
		for _, j := range t.Jobs {
			if !j.Stub && slurm.TerminalState(j.State) {
				keys = append(keys, [2]string{t.Cluster, j.Key})
			}
		}
	}
	outcomes := map[[2]string]advisor.Outcome{}
	const batch = 200 // the OR of keys must stay well inside SQLite's expression depth
	for len(keys) > 0 {
		n := min(len(keys), batch)
		recs, err := st.History(c.Context, history.HistoryFilter{Keys: keys[:n]})
		if err != nil {
			return nil, err
		}
		for i := range recs {
			outcomes[[2]string{recs[i].Cluster, recs[i].Key}] = advisor.Explain(&recs[i], site)
		}
		keys = keys[n:]
	}
	return outcomes, nil
}

// unknownToSlurm lists the tracked jobs out of the queue whose record the
// history lacks that accounting does not have either: Slurm never had them.
// Nothing when sacct cannot be asked: they stay "ended (collect)".
func unknownToSlurm(c *cli.Context, tracked []history.Tracked, live map[string][]slurm.QueuedJob) []string {
	var ids []string
	for _, t := range tracked {
		if len(t.Jobs) == 0 && len(live[t.JobID]) == 0 {
			ids = append(ids, t.JobID)
		}
	}
	unknown, err := collect.SlurmLacks(c.Context, slurmClient(c), ids)
	if err != nil {
		return nil
	}
	return unknown
}

// queueStates asks squeue about the tracked jobs that have not ended.
func queueStates(c *cli.Context, tracked []history.Tracked) (map[string][]slurm.QueuedJob, error) {
	ids := history.Unended(tracked)
	live := map[string][]slurm.QueuedJob{}
	if len(ids) == 0 {
		return live, nil
	}
	jobs, err := slurmClient(c).Queue(c.Context, ids)
	if err != nil {
		return live, err
	}
	for _, j := range jobs {
		base := j.ID
		if i := strings.IndexAny(base, "_+"); i >= 0 {
			base = base[:i]
		}
		live[base] = append(live[base], j)
	}
	return live, nil
}

// outcomeNoSuchJob is the outcome of a tracked id Slurm has no job of.
const outcomeNoSuchJob = "no such job"

func statusOf(t history.Tracked, live map[string][]slurm.QueuedJob, queueOK bool, outcomes map[[2]string]advisor.Outcome, unknown []string) jobStatus {
	r := jobStatus{JobID: t.JobID, Cluster: t.Cluster, Profile: trackedProfile(t), Script: t.Script, SweepDir: t.SweepDir,
		Workload: t.Workload, Submitted: t.Submitted, Jobs: []jobStateRow{}}
	for _, j := range t.Jobs {
		o := outcomes[[2]string{t.Cluster, j.Key}]
		r.Jobs = append(r.Jobs, jobStateRow{j.ID, j.State, o.Kind, o.Text})
	}
	o := trackedOutcome(t, outcomes)
	r.Outcome, r.Explanation = o.Kind, o.Text
	switch q := live[t.JobID]; {
	case len(q) > 0:
		r.State, r.Reason = q[0].State, q[0].Reason
		for _, j := range q[1:] {
			if j.State == "RUNNING" {
				r.State, r.Reason = j.State, j.Reason
			}
		}
	case t.Ended():
		r.State = summaryState(t.Jobs)
	case !queueOK && len(t.Jobs) > 0:
		r.State = summaryState(t.Jobs)
	case !queueOK:
		r.State = "unknown"
	case slices.Contains(unknown, t.JobID):
		r.State, r.Outcome, r.Explanation = "not in Slurm", outcomeNoSuchJob, slurmHasNo([]string{t.JobID})
	default:
		r.State = "ended (collect)" // out of the queue, its record not collected yet
	}
	return r
}

// trackedProfile is the profile a submission asked for, else the one
// accounting gives its jobs (track does not know it): "1g.10gb", or
// "1g.10gb, 2g.20gb" for an array whose tasks had different ones.
func trackedProfile(t history.Tracked) string {
	if t.Profile != "" {
		return t.Profile
	}
	var profiles []string
	for _, j := range t.Jobs {
		if j.Profile != "" && !slices.Contains(profiles, j.Profile) {
			profiles = append(profiles, j.Profile)
		}
	}
	return strings.Join(profiles, ", ")
}

// trackedOutcome is how a submission ended, once every job of it has: its
// job's outcome, or for an array (or a heterogeneous job) how many jobs did
// not complete and how the first of them ended.
func trackedOutcome(t history.Tracked, outcomes map[[2]string]advisor.Outcome) advisor.Outcome {
	if !t.Ended() {
		return advisor.Outcome{}
	}
	if len(t.Jobs) == 1 {
		return outcomes[[2]string{t.Cluster, t.Jobs[0].Key}]
	}
	failed := 0
	var first advisor.Outcome
	for _, j := range t.Jobs {
		if o := outcomes[[2]string{t.Cluster, j.Key}]; o.Kind != advisor.OutcomeCompleted {
			if failed == 0 {
				first = o
				first.Text = j.ID + " " + o.Text
			}
			failed++
		}
	}
	if failed == 0 {
		return advisor.Outcome{Kind: advisor.OutcomeCompleted, Text: fmt.Sprintf("completed: all %d of its jobs", len(t.Jobs))}
	}
	first.Text = fmt.Sprintf("did not complete in %d of its %d jobs: %s", failed, len(t.Jobs), first.Text)
	return first
}

// summaryState is the one state of a job, or of an array's tasks: "COMPLETED",
// or "COMPLETED 2, FAILED 1".
func summaryState(jobs []history.TrackedJob) string {
	counts := map[string]int{}
	var order []string
	for _, j := range jobs {
		s := j.State
		if j.Stub {
			s += "?"
		}
		if counts[s] == 0 {
			order = append(order, s)
		}
		counts[s]++
	}
	if len(order) == 1 {
		return order[0]
	}
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = fmt.Sprintf("%s %d", s, counts[s])
	}
	return strings.Join(parts, ", ")
}
