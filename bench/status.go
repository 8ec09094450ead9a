package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// JobStatus is one tracked submission as status and wait show it.
type JobStatus struct {
	JobID     string        `json:"job_id"`
	Cluster   string        `json:"cluster"`
	Profile   string        `json:"profile"` // asked for, else accounting's, else squeue's request
	State     string        `json:"state"`
	Reason    string        `json:"reason,omitempty"`
	Script    string        `json:"script"`
	SweepDir  string        `json:"sweep_dir,omitempty"`
	Workload  string        `json:"workload,omitempty"`
	Submitted time.Time     `json:"submitted,omitzero"` // zero: not recorded
	Jobs      []JobStateRow `json:"jobs"`               // array tasks and het components
	// How it ended, once every job of it has: see advisor.Explain.
	Outcome     string `json:"outcome,omitempty"`
	Explanation string `json:"explanation,omitempty"`
}

// Why is the job's explanation where it did not complete, else "-".
func (r JobStatus) Why() string {
	if r.Outcome == "" || r.Outcome == outcome.Completed {
		return "-"
	}
	return r.Explanation
}

// JobStateRow is one job of a submission.
type JobStateRow struct {
	JobID       string `json:"job_id"`
	State       string `json:"state"`
	Outcome     string `json:"outcome,omitempty"`
	Explanation string `json:"explanation,omitempty"`
}

// OutcomeNoSuchJob is the outcome of a tracked id Slurm has no job of.
const OutcomeNoSuchJob = "no such job"

// States status shows beside Slurm's own.
const (
	StateNotInSlurm = "not in Slurm"
	StateCollect    = "ended (collect)" // out of the queue, its record not collected yet
	StateUnknown    = "unknown"         // squeue could not be asked, and the history has no record
)

// Live is what squeue said of the tracked jobs that have not ended.
type Live struct {
	Jobs    map[string][]slurm.QueuedJob // by the id sbatch printed
	OK      bool                         // squeue answered: a job absent from Jobs has left the queue
	Unknown []string                     // ids neither squeue nor accounting knows
}

// StatusOf is the submission t as status shows it: squeue's state while
// Slurm still has it, else accounting's, with how it ended.
func StatusOf(t history.Tracked, live Live, outcomes Outcomes) JobStatus {
	r := JobStatus{JobID: t.JobID, Cluster: t.Cluster, Profile: TrackedProfile(t), Script: t.Script, SweepDir: t.SweepDir,
		Workload: t.Workload, Submitted: submittedAt(t), Jobs: []JobStateRow{}}
	for _, j := range t.Jobs {
		o := outcomes.Job(t, j)
		r.Jobs = append(r.Jobs, JobStateRow{j.ID, j.State, o.Kind, o.Text})
	}
	o := outcomes.Of(t)
	r.Outcome, r.Explanation = o.Kind, o.Text
	switch q := live.Jobs[t.JobID]; {
	case len(q) > 0:
		r.State, r.Reason = q[0].State, q[0].Reason
		for _, j := range q[1:] {
			if j.State == "RUNNING" {
				r.State, r.Reason = j.State, j.Reason
			}
		}
	case t.Ended():
		r.State = SummaryState(t.Jobs)
	case !live.OK && len(t.Jobs) > 0:
		r.State = SummaryState(t.Jobs)
	case !live.OK:
		r.State = StateUnknown
	case slices.Contains(live.Unknown, t.JobID):
		r.State, r.Outcome, r.Explanation = StateNotInSlurm, OutcomeNoSuchJob, collect.NoSuchJob([]string{t.JobID})
	default:
		r.State = StateCollect
	}
	return r
}

// submittedAt is when accounting says the submission's first job was
// submitted, else when it was tracked (the wrapper tracks at submission;
// `track` after the fact would date an old job today); zero: unknown.
func submittedAt(t history.Tracked) time.Time {
	var first int64
	for _, j := range t.Jobs {
		if j.Submit > 0 && (first == 0 || j.Submit < first) {
			first = j.Submit
		}
	}
	switch {
	case first > 0:
		return time.Unix(first, 0)
	case t.Submitted.Unix() > 0:
		return t.Submitted
	}
	return time.Time{} // a record without a time, not 1970 or year 1
}

// QueuedProfile fills in the profile of a row not collected yet: the one
// its request names, as squeue shows it (site may be nil).
func QueuedProfile(r *JobStatus, live Live, site *catalog.Site) {
	if q := live.Jobs[r.JobID]; r.Profile == "" && len(q) > 0 && site != nil {
		if p, ok := site.ProfileForType(q[0].GPUType()); ok {
			r.Profile = p.Name
		}
	}
}

// TrackedProfile is the profile a submission asked for, else the one
// accounting gives its jobs (track does not know it): "1g.10gb", or
// "1g.10gb, 2g.20gb" for an array whose tasks had different ones.
func TrackedProfile(t history.Tracked) string {
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

// SummaryState is the one state of a job, or of an array's tasks:
// "COMPLETED", or "COMPLETED 2, FAILED 1"; a placeholder record's ends "?".
func SummaryState(jobs []history.TrackedJob) string {
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

// RecentWindow is how long status keeps listing a job after it ended.
const RecentWindow = 7 * 24 * time.Hour

// Recent keeps the submissions worth listing by default: those not ended
// (running, queued, not collected, unknown to Slurm) and those that ended
// since (when accounting gave no end, since they were submitted). It also
// returns how many it left out.
func Recent(tracked []history.Tracked, since time.Time) (kept []history.Tracked, left int) {
	for _, t := range tracked {
		end := t.EndedAt()
		if end.IsZero() {
			end = t.Submitted
		}
		if !t.Ended() || !end.Before(since) {
			kept = append(kept, t)
		} else {
			left++
		}
	}
	return kept, left
}

// StatusQuery says which tracked submissions status lists.
type StatusQuery struct {
	JobIDs   []string // only these; none: every one
	SweepDir string   // only the sweep's in this directory, absolute as the history holds it
	All      bool     // also those that ended before RecentWindow
	Now      time.Time
	Site     *catalog.Site // nil: the explanations lack the profiles' usable memory
}

// Named reports whether jobs were asked about by id or sweep: those are
// listed however long ago they ended.
func (q StatusQuery) Named() bool { return len(q.JobIDs) > 0 || q.SweepDir != "" }

// StatusSlurm is what status asks Slurm: squeue of the jobs not ended,
// and accounting of the ids neither squeue nor the history knows.
type StatusSlurm interface {
	Queue
	// Lacks lists the ids that Slurm has no job of (collect.SlurmLacks).
	Lacks(ctx context.Context, ids []string) ([]string, error)
}

// StatusDeps are status's ways to Slurm and the history.
type StatusDeps struct {
	Slurm   StatusSlurm
	History History
}

// StatusResult is what status lists.
type StatusResult struct {
	Rows     []JobStatus
	Tracked  int   // the submissions the history tracks of those asked about
	Left     int   // of them, those that ended before RecentWindow: not in Rows
	QueueErr error // squeue failed: the states come from the history only
}

// Status is the tracked submissions asked about, each with its state:
// squeue's while Slurm still has it, else the history's, with how it
// ended. Unless asked by id or sweep, or All, only the recent ones.
func Status(ctx context.Context, q StatusQuery, deps StatusDeps) (StatusResult, error) {
	tracked, err := deps.History.Tracked(ctx, history.TrackedFilter{JobIDs: q.JobIDs, SweepDir: q.SweepDir})
	if err != nil {
		return StatusResult{}, err
	}
	res := StatusResult{Tracked: len(tracked)}
	if !q.All && !q.Named() {
		// Before the explanations, which read each job's record: a history
		// of years explains only the rows it shows.
		tracked, res.Left = Recent(tracked, q.Now.Add(-RecentWindow))
	}
	outcomes, err := ExplainEnded(ctx, deps.History, q.Site, tracked)
	if err != nil {
		return StatusResult{}, err
	}
	var live Live
	live, res.QueueErr = liveStates(ctx, deps.Slurm, tracked)
	res.Rows = make([]JobStatus, 0, len(tracked))
	for _, t := range tracked {
		r := StatusOf(t, live, outcomes)
		QueuedProfile(&r, live, q.Site)
		res.Rows = append(res.Rows, r)
	}
	return res, nil
}

// StillWaiting is what a wait that stopped early (--timeout) leaves in
// Slurm: the submissions of ids that squeue shows unended, each as status
// shows it, tracked or not. A squeue that fails leaves every one, its
// state the history's or unknown. site may be nil.
func StillWaiting(ctx context.Context, sl Queue, h TrackedReader, site *catalog.Site, ids []string) ([]JobStatus, error) {
	tracked, err := h.Tracked(ctx, history.TrackedFilter{JobIDs: ids})
	if err != nil {
		return nil, err
	}
	byID := map[string]history.Tracked{}
	for _, t := range tracked {
		byID[t.JobID] = t
	}
	jobs, qerr := sl.Queue(ctx, ids)
	live := Live{Jobs: QueueBySubmission(jobs), OK: qerr == nil}
	rows := []JobStatus{}
	for _, id := range ids {
		if live.OK && !unended(live.Jobs[id]) {
			continue
		}
		t, ok := byID[id]
		if !ok {
			t = history.Tracked{Submission: history.Submission{JobID: id}}
		}
		r := StatusOf(t, live, Outcomes{})
		QueuedProfile(&r, live, site)
		rows = append(rows, r)
	}
	return rows, nil
}

// unended reports whether any of a submission's jobs squeue shows has not
// ended: the wait goes on for it (queueState).
func unended(jobs []slurm.QueuedJob) bool {
	return slices.ContainsFunc(jobs, func(j slurm.QueuedJob) bool { return !slurm.TerminalState(j.State) })
}

// liveStates asks squeue about the tracked jobs that have not ended, and
// accounting about those squeue does not show and the history has no
// record of (Slurm may never have had them). A squeue that fails leaves
// the states to the history (Live.OK false), and its error is returned.
func liveStates(ctx context.Context, sl StatusSlurm, tracked []history.Tracked) (Live, error) {
	live := Live{Jobs: map[string][]slurm.QueuedJob{}, OK: true}
	if ids := history.Unended(tracked); len(ids) > 0 {
		jobs, err := sl.Queue(ctx, ids)
		if err != nil {
			live.OK = false
			return live, err
		}
		live.Jobs = QueueBySubmission(jobs)
	}
	var ask []string
	for _, t := range tracked {
		if len(t.Jobs) == 0 && len(live.Jobs[t.JobID]) == 0 {
			ask = append(ask, t.JobID)
		}
	}
	// Without accounting they stay "ended (collect)": no reason to fail.
	live.Unknown, _ = sl.Lacks(ctx, ask)
	return live, nil
}
