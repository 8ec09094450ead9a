package advisor

import (
	"slices"
	"time"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// Change is what to change in the script to follow the advice, and what
// that saves.
type Change struct {
	Asks  string             `json:"asks,omitempty"` // the profile the script asks for now; "" when none
	To    string             `json:"to,omitempty"`   // "": no profile is advised yet; the lines fix what stops the next run
	Lines []slurm.LineChange `json:"lines"`          // empty: the script already asks for it
	// SU saved per run (negative: the advice costs more, for safety), and at
	// the rate the user ran it: the runs in the 30 days up to the newest one
	// (a history read months later still has a rate).
	SUPerRun *float64 `json:"su_saved_per_run,omitempty"`
	// Because says why the advice leaves the profile asked for when it
	// saves nothing: that profile is not safe, a tie, or the objective.
	Because      string   `json:"because,omitempty"`
	RunsPerMonth int      `json:"runs_last_30_days"`
	SUPerMonth   *float64 `json:"su_saved_per_month,omitempty"`
}

// month is the span the runs per month are counted over.
const month = 30 * 24 * time.Hour

// change works out the script's lines that ask for the recommended
// profile, its --time and --mem, and the SU the change saves.
func (a *analysis) change() {
	if a.job.Source == nil {
		return
	}
	if a.rec.Recommended == nil {
		a.fixBeforeMeasuring()
		return
	}
	choice := a.rec.Profile(*a.rec.Recommended)
	p, ok := a.site.Profile(choice.Profile)
	if !ok {
		return
	}
	v := slurm.Variant{Time: choice.TimeLimit, Mem: a.rec.Mem}
	if a.rec.Requested == nil || *a.rec.Requested != choice.Profile {
		v.GPURequest = p.Request
	}
	if choice.Partition != "" && choice.Partition != a.base.Partition {
		v.Partition = choice.Partition
	}
	if p.QoS != "" && p.QoS != a.job.Resources.QoS {
		v.QoS = p.QoS
	}
	lines, err := a.job.Source.Changes(v)
	if err != nil {
		a.note("the change for %s could not be written into the script: %v", choice.Profile, err)
		return
	}
	ch := &Change{To: choice.Profile, Lines: lines}
	if ch.Lines == nil {
		ch.Lines = []slurm.LineChange{}
	}
	if a.rec.Requested != nil {
		ch.Asks = *a.rec.Requested
		if asked := a.rec.Profile(ch.Asks); asked != nil && asked.SU != nil && choice.SU != nil && !asked.RuntimeAtLeast && ch.Asks != ch.To {
			ch.SUPerRun = ptr(catalog.RoundSU(*asked.SU - *choice.SU))
		}
	}
	ch.Because = a.leaveReason(ch)
	ch.RunsPerMonth = a.runsInLastMonth()
	if ch.SUPerRun != nil && ch.RunsPerMonth > 0 {
		ch.SUPerMonth = ptr(catalog.RoundSU(*ch.SUPerRun * float64(ch.RunsPerMonth)))
	}
	a.rec.Change = ch
}

// leaveReason says why the advice leaves the profile the script asks for
// when the change saves no SU: the profile is not safe, the objective is
// time or turnaround, or the two are a tie within the noise.
func (a *analysis) leaveReason(ch *Change) string {
	asked := a.rec.Profile(ch.Asks)
	choice := a.rec.Profile(ch.To)
	switch {
	case asked == nil || choice == nil || ch.Asks == ch.To:
		return ""
	case ch.SUPerRun != nil && *ch.SUPerRun > 0:
		if asked.Eligible && a.opt.Objective == ObjectiveSU && asked.SU != nil && choice.SU != nil &&
			*asked.SU <= *choice.SU*(1+a.opt.tieMargin(asked, choice)) {
			return "a saving within the run-to-run noise: the two are a tie, and a tie goes to the smaller profile"
		}
		return ""
	case !asked.Eligible:
		return asked.Profile + " is not advised: " + asked.Reason
	case a.opt.Objective == ObjectiveTime:
		return "the objective is the shortest runtime"
	case a.opt.Objective == ObjectiveTurnaround:
		return "the objective is the shortest queue wait and runtime"
	}
	return "the two are a tie within the run-to-run noise, and a tie goes to the smaller profile"
}

// fixBeforeMeasuring is the change to make before the next run can tell
// anything, when nothing is recommended yet: the --mem after a host OOM,
// the --time after a run that reached its limit.
func (a *analysis) fixBeforeMeasuring() {
	if a.rec.Mem == "" && a.rec.TimeLimit == "" {
		return
	}
	lines, err := a.job.Source.Changes(slurm.Variant{Time: a.rec.TimeLimit, Mem: a.rec.Mem})
	if err != nil || len(lines) == 0 {
		return
	}
	a.rec.Change = &Change{Lines: lines}
	if a.rec.Requested != nil {
		a.rec.Change.Asks = *a.rec.Requested
	}
}

// runsInLastMonth counts the user's runs of the job submitted in the 30
// days up to Job.Now (else up to the newest of them): the user's rate of
// running it. In a site-wide history other users' runs are not this rate,
// nor are a probe's or a sweep's variants, which measured the profiles
// once (four of them the day of a probe are no monthly habit).
func (a *analysis) runsInLastMonth() int {
	if a.basis == BasisPrior {
		return 0
	}
	var times []time.Time
	for _, r := range a.runs {
		mine := a.job.User == "" || r.User == "" || r.User == a.job.User
		if mine && !r.Swept && !r.Submitted.IsZero() {
			times = append(times, r.Submitted)
		}
	}
	now := a.job.Now
	if now.IsZero() && len(times) > 0 {
		now = slices.MaxFunc(times, time.Time.Compare)
	}
	n := 0
	for _, t := range times {
		if !t.After(now) && now.Sub(t) < month {
			n++
		}
	}
	return n
}
