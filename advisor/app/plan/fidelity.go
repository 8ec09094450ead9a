package plan

import (
	"github.com/migadvisor/migadvisor/advisor/base/replay"
	"github.com/migadvisor/migadvisor/advisor/base/replay/fidelity"
)

// fidelity replays the period's jobs as they ran (the profile they ran
// on, their recorded runtimes and limits) on today's layout, and sets the
// waits against those Slurm recorded: how far the plan's replay can be
// trusted on this site's own queue, with today's layout as given.
func (e *evaluator) fidelity() (*fidelity.Result, error) {
	d := e.demand
	e.jobs = e.jobs[:0]
	waits := make([]int64, len(d.Jobs))
	for i := range d.Jobs {
		j := &d.Jobs[i]
		waits[i] = max(j.Start-j.Submit, 0)
		e.jobs = append(e.jobs, replay.Job{ID: j.ID, Submit: j.Submit, Profile: d.Profiles[j.Asked], Count: int(j.Count), LimitS: j.LimitS, RuntimeS: j.ElapsedS})
	}
	res, err := fidelity.CheckRecorded(&e.rp, e.jobs, waits, e.today.Slots(), e.opt)
	if err != nil {
		return nil, err
	}
	res.Worst = nil // its jobs have no ids here: the figures are the plan's
	return &res, nil
}
