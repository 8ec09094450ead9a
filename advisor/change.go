package advisor

import (
	"fmt"
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

// The fifth stage: change writes the decision into the script: the lines
// that ask for the profile recommended, its --time and --mem, and the SU
// that saves; with nothing recommended, the lines that fix what stops the
// next run. It reads the decision and returns the change.

// changing is what the change reads; it changes none of it.
type changing struct {
	site     *catalog.Site
	ev       *evidence
	job      Job
	opt      Options
	profiles []ProfileAdvice
	asks     string // the profile the script asks for; "": none
}

// change works out the script's lines for the decision, and what they
// save; nil where the script is not given, or asks for it already with
// nothing to fix. The note says why the lines could not be written.
func change(site *catalog.Site, ev evidence, job Job, opt Options, profiles []ProfileAdvice, d decision) (*Change, string) {
	if job.Source == nil {
		return nil, ""
	}
	c := changing{site: site, ev: &ev, job: job, opt: opt, profiles: profiles}
	if ev.base.Profile != nil {
		c.asks = ev.base.Profile.Name
	}
	if d.choice == "" {
		return c.fixBeforeMeasuring(d.timeLimit), ""
	}
	return c.toChoice(profileNamed(profiles, d.choice))
}

// toChoice is the change to the profile chosen, and what it saves.
func (c changing) toChoice(choice *ProfileAdvice) (*Change, string) {
	p, ok := c.site.Profile(choice.Profile)
	if !ok {
		return nil, ""
	}
	v := slurm.Variant{Time: choice.TimeLimit, Mem: c.ev.host.mem}
	if c.asks != choice.Profile {
		v.GPURequest = p.Request
	}
	if choice.Partition != "" && choice.Partition != c.ev.base.Partition {
		v.Partition = choice.Partition
	}
	if p.QoS != "" && p.QoS != c.job.Resources.QoS {
		v.QoS = p.QoS
	}
	lines, err := c.job.Source.Changes(v)
	if err != nil {
		return nil, fmt.Sprintf("the change for %s could not be written into the script: %v", choice.Profile, err)
	}
	ch := &Change{To: choice.Profile, Lines: lines, Asks: c.asks}
	if ch.Lines == nil {
		ch.Lines = []slurm.LineChange{}
	}
	if asked := profileNamed(c.profiles, c.asks); asked != nil && asked.SU != nil && choice.SU != nil && !asked.RuntimeAtLeast && ch.Asks != ch.To {
		ch.SUPerRun = ptr(catalog.RoundSU(*asked.SU - *choice.SU))
	}
	ch.Because = c.leaveReason(ch)
	ch.RunsPerMonth = runsInLastMonth(c.ev, c.job)
	if ch.SUPerRun != nil && ch.RunsPerMonth > 0 {
		ch.SUPerMonth = ptr(catalog.RoundSU(*ch.SUPerRun * float64(ch.RunsPerMonth)))
	}
	return ch, ""
}

// leaveReason says why the advice leaves the profile the script asks for
// when the change saves no SU: the profile is not safe, the objective is
// time or turnaround, or the two are a tie within the noise.
func (c changing) leaveReason(ch *Change) string {
	asked := profileNamed(c.profiles, ch.Asks)
	choice := profileNamed(c.profiles, ch.To)
	switch {
	case asked == nil || choice == nil || ch.Asks == ch.To:
		return ""
	case ch.SUPerRun != nil && *ch.SUPerRun > 0:
		if asked.Eligible && c.opt.Objective == ObjectiveSU && asked.SU != nil && choice.SU != nil &&
			*asked.SU <= *choice.SU*(1+c.opt.tieMargin(asked, choice)) {
			return "a saving within the run-to-run noise: the two are a tie, and a tie goes to the smaller profile"
		}
		return ""
	case !asked.Eligible:
		return asked.Profile + " is not advised: " + asked.Reason
	case c.opt.Objective == ObjectiveTime:
		return "the objective is the shortest runtime"
	case c.opt.Objective == ObjectiveTurnaround:
		return "the objective is the shortest queue wait and runtime"
	}
	return "the two are a tie within the run-to-run noise, and a tie goes to the smaller profile"
}

// fixBeforeMeasuring is the change to make before the next run can tell
// anything, when nothing is recommended yet: the --mem after a host OOM,
// the --time (limit) after a run that reached its limit.
func (c changing) fixBeforeMeasuring(limit string) *Change {
	mem := c.ev.host.mem
	if mem == "" && limit == "" {
		return nil
	}
	lines, err := c.job.Source.Changes(slurm.Variant{Time: limit, Mem: mem})
	if err != nil || len(lines) == 0 {
		return nil
	}
	return &Change{Lines: lines, Asks: c.asks}
}

// runsInLastMonth counts the user's runs of the job submitted in the 30
// days up to Job.Now (else up to the newest of them): the user's rate of
// running it. In a site-wide history other users' runs are not this rate,
// nor are a probe's or a sweep's variants, which measured the profiles
// once (four of them the day of a probe are no monthly habit).
func runsInLastMonth(ev *evidence, job Job) int {
	if ev.basis == BasisPrior {
		return 0
	}
	var times []time.Time
	for _, r := range ev.runs {
		mine := job.User == "" || r.User == "" || r.User == job.User
		if mine && !r.Swept && !r.Submitted.IsZero() {
			times = append(times, r.Submitted)
		}
	}
	now := job.Now
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
