package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/store"
	"github.com/migadvisor/migadvisor/slurm"
)

func statusCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "status",
		Usage:     "list tracked jobs and their states",
		ArgsUsage: "[JOBID...]",
		Description: `Lists the jobs migadvisor tracks (from 'sweep --submit' and 'track'), with
their state: from squeue while Slurm still has them, else from the history.
A job that has left the queue but whose accounting record is not collected yet
shows as "ended (collect)".

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
	Profile   string        `json:"profile"` // asked for
	State     string        `json:"state"`
	Reason    string        `json:"reason,omitempty"`
	Script    string        `json:"script"`
	SweepDir  string        `json:"sweep_dir,omitempty"`
	Workload  string        `json:"workload,omitempty"`
	Submitted time.Time     `json:"submitted"`
	Jobs      []jobStateRow `json:"jobs"` // array tasks and het components
}

type jobStateRow struct {
	JobID string `json:"job_id"`
	State string `json:"state"`
}

// trackedSelection reads the tracked submissions named by ids or --sweep.
func trackedSelection(c *cli.Context, st *store.Store, ids []string) ([]store.Tracked, error) {
	f := store.TrackedFilter{JobIDs: ids}
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
	rows := make([]jobStatus, 0, len(tracked))
	for _, t := range tracked {
		rows = append(rows, statusOf(t, live, warn == nil))
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, rows)
	}
	if len(rows) == 0 {
		if isTTY(c.App.Writer) {
			fmt.Fprintln(c.App.Writer, "no tracked jobs (submit with 'migadvisor sweep JOB.sh --out DIR --submit', or link jobs with 'migadvisor track')")
		}
		return nil
	}
	t := newTable(c.App.Writer)
	fmt.Fprintln(t, "JOB ID\tPROFILE\tSTATE\tSCRIPT\tSUBMITTED")
	for _, r := range rows {
		state := r.State
		if r.Reason != "" && r.Reason != "None" {
			state += " (" + r.Reason + ")"
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\n", r.JobID, orDash(r.Profile), state, filepath.Base(r.Script), r.Submitted.Local().Format("2006-01-02 15:04"))
	}
	return t.Flush()
}

// queueStates asks squeue about the tracked jobs that have not ended.
func queueStates(c *cli.Context, tracked []store.Tracked) (map[string][]slurm.QueuedJob, error) {
	ids := store.Unended(tracked)
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

func statusOf(t store.Tracked, live map[string][]slurm.QueuedJob, queueOK bool) jobStatus {
	r := jobStatus{JobID: t.JobID, Cluster: t.Cluster, Profile: t.Profile, Script: t.Script, SweepDir: t.SweepDir,
		Workload: t.Workload, Submitted: t.Submitted, Jobs: []jobStateRow{}}
	for _, j := range t.Jobs {
		r.Jobs = append(r.Jobs, jobStateRow{j.ID, j.State})
	}
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
	default:
		r.State = "ended (collect)" // out of the queue, its record not collected yet
	}
	return r
}

// summaryState is the one state of a job, or of an array's tasks: "COMPLETED",
// or "COMPLETED 2, FAILED 1".
func summaryState(jobs []store.TrackedJob) string {
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
