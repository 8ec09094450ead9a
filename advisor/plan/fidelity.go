package plan

import (
	"fmt"

	"github.com/migadvisor/migadvisor/advisor/plan/fidelity"
	"github.com/migadvisor/migadvisor/advisor/plan/replay"
)

// fidelityOf replays the period's jobs as they ran (the profile they ran
// on, their recorded runtimes and limits) on today's layout, and sets the
// waits against those Slurm recorded: how far the plan's replay can be
// trusted on this site's own queue, with today's layout as given.
func fidelityOf(d *Demand, today Fleet, opt replay.Options) (*fidelity.Result, error) {
	jobs := make([]fidelity.Recorded, 0, len(d.Jobs))
	for i := range d.Jobs {
		j := &d.Jobs[i]
		jobs = append(jobs, fidelity.Recorded{JobID: fmt.Sprint(j.ID), RecordedWaitS: max(j.Start-j.Submit, 0),
			Job: replay.Job{ID: j.ID, Submit: j.Submit, Profile: d.Profiles[j.Asked], Count: int(j.Count), LimitS: j.LimitS, RuntimeS: j.ElapsedS}})
	}
	res, err := fidelity.CheckRecorded(jobs, today.Slots(), opt)
	if err != nil {
		return nil, err
	}
	res.Worst = nil // the plan's JSON keeps the figures; fidelity's own test lists the jobs
	return &res, nil
}
