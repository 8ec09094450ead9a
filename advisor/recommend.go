package advisor

import (
	"fmt"
	"slices"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// What a recommendation optimises.
const (
	ObjectiveSU         = "su"         // fewest service units (per unit of work when the job reports work)
	ObjectiveTime       = "time"       // shortest run
	ObjectiveTurnaround = "turnaround" // shortest queue wait + run
)

// Objectives lists the objectives, the default first.
var Objectives = []string{ObjectiveSU, ObjectiveTime, ObjectiveTurnaround}

// Where the recommended profile's figures come from.
const (
	BasisMeasured  = "measured"  // the job's own runs on that profile
	BasisPredicted = "predicted" // the job's runs on other profiles, scaled
	BasisPrior     = "prior"     // a reference benchmark the script looks like
	BasisNone      = "none"      // nothing safe to recommend
)

// DefaultSUTolerance is how close (as a share) a smaller profile's SU must
// be to the lowest for the smaller one to be preferred.
const DefaultSUTolerance = 0.05

// Options tune a recommendation; zero values take the site's or the defaults.
type Options struct {
	Objective    string
	MaxSlowdown  float64 // exclude profiles more than this many times slower than the fastest; 0: none
	SUTolerance  float64
	LowRiskShare float64
}

func (o Options) withDefaults(site *catalog.Site) Options {
	if o.Objective == "" {
		o.Objective = ObjectiveSU
	}
	if o.SUTolerance <= 0 {
		o.SUTolerance = site.Advice.SUTolerance
	}
	if o.SUTolerance <= 0 {
		o.SUTolerance = DefaultSUTolerance
	}
	if o.LowRiskShare <= 0 {
		o.LowRiskShare = site.Advice.LowRiskShare
	}
	if o.LowRiskShare <= 0 {
		o.LowRiskShare = memory.DefaultLowRiskShare
	}
	return o
}

// Job is what a recommendation is for: a script, what it asks for, and its evidence.
type Job struct {
	Script      string // the path, as the user gave it, for the commands in the advice
	Fingerprint string
	Resources   slurm.Resources
	Source      *slurm.Script // the script itself, for the lines to change; nil: no change is shown
	// Reads is the script where Source is not given (the wrapper's, which
	// judges the command line's resources; the report's): read only for
	// the software it runs, which says what a memory peak proves.
	Reads      *slurm.Script
	Runs       []Run
	Prior      *catalog.Benchmark // stands in for Runs when there are none
	QueueWaitS map[string]float64 // median queue wait per profile
	Notes      []string           // what gathering the evidence found worth saying (jobs not collected yet, ...)
	Now        time.Time          // for the runs per month; zero: the newest run's submission
	User       string             // whose rate of runs the monthly saving is at; "": every run's
	// Peers are other scripts' times on two profiles or more, from the
	// histories' advice indexes: a job measured on one profile is scaled
	// like them; before them, like the reference benchmark its script looks
	// like (Resembles; nil: none).
	Peers     []runmodel.Peer
	Resembles *catalog.Benchmark
}

// Recommendation is the advice for one script.
type Recommendation struct {
	Fingerprint string  `json:"fingerprint"`
	Site        string  `json:"site"`
	Script      string  `json:"script"`
	Objective   string  `json:"objective"`
	Requested   *string `json:"requested"` // the profile the script asks for
	Recommended *string `json:"recommended"`
	Basis       string  `json:"basis"`
	Runs        int     `json:"runs"`           // the script's runs the advice rests on (0 with a prior)
	EarlierRuns int     `json:"earlier_runs"`   // of those, runs of an earlier version of the script
	Reason      string  `json:"reason"`         // why the recommended profile, or why none
	Next        string  `json:"next,omitempty"` // the command that gets the missing evidence: NextStep.Command()
	// Refused: sbatch or the site would refuse the script as it is (the
	// notes name each error, with its line): the advice is of the job it
	// asks for, which cannot run until they are fixed.
	Refused    bool             `json:"refused,omitempty"`
	NextStep   NextStep         `json:"next_step,omitzero"`
	TimeLimit  string           `json:"time_limit,omitempty"`
	Mem        string           `json:"mem,omitempty"`        // --mem to ask for after a host OOM
	MemReason  string           `json:"mem_reason,omitempty"` // the run that ran out of host memory, in words
	Prior      *PriorRef        `json:"prior,omitempty"`
	GPUMemNeed *memory.NeedJSON `json:"gpu_mem_need"`
	// GPUMemCeiling is the most the job may need where its peaks are no
	// need (a caching or preallocating framework's); GPUMemHolder is what
	// held its memory, and how that is known.
	GPUMemCeiling *memory.NeedJSON `json:"gpu_mem_ceiling,omitempty"`
	GPUMemHolder  *memory.Holder   `json:"gpu_mem_holder,omitempty"`
	Model         string           `json:"runtime_model"`
	RuntimeWhy    string           `json:"runtime_why,omitempty"` // why the runtime model is the one chosen, in a few words
	// TimeBudgetS is the time limit every run ran to (timeBudget), 0 where
	// not: the runtimes and SU are then those of a run's work, and with
	// the same --time a run on a smaller slice does less of it.
	TimeBudgetS float64         `json:"time_budget_s,omitempty"`
	MultiGPU    *GPUUse         `json:"multi_gpu,omitempty"` // a job of several GPUs, which MIG slices cannot serve
	Profiles    []ProfileAdvice `json:"profiles"`
	Change      *Change         `json:"change,omitempty"`   // what to change in the script to follow the advice
	CPUOnly     bool            `json:"cpu_only,omitempty"` // the script asks for no GPU and has no GPU runs: no profile is judged
	Notes       []string        `json:"notes"`
}

// PriorRef names the reference benchmark a prior comes from.
type PriorRef struct {
	Benchmark string `json:"benchmark"`
	Title     string `json:"title"`
	Source    string `json:"source"`
}

// ProfileAdvice is the judgement on one profile.
type ProfileAdvice struct {
	Profile       string   `json:"profile"`
	Partition     string   `json:"partition,omitempty"` // where it would run
	Runs          int      `json:"runs"`
	Completed     int      `json:"completed"`
	TimedOut      int      `json:"timed_out"`
	HostOOM       int      `json:"host_oom"` // runs killed for host memory
	OOMObserved   bool     `json:"oom_observed"`
	GPUOOMs       int      `json:"gpu_ooms"`              // runs here that ran out of GPU memory
	Emulated      string   `json:"emulated_on,omitempty"` // the GPU that emulated this profile's runs`
	GPUMemNeedMiB *float64 `json:"gpu_mem_need_mib"`
	// GPUMemCeilingMiB is the most the job may need where its peaks are no
	// need (Recommendation.GPUMemCeiling).
	GPUMemCeilingMiB *float64    `json:"gpu_mem_ceiling_mib,omitempty"`
	UsableMiB        float64     `json:"usable_mib"`
	OOMRisk          string      `json:"oom_risk"`
	OOMRiskReason    string      `json:"oom_risk_reason"`
	RuntimeS         *float64    `json:"runtime_s"` // whole seconds, as printed
	RuntimeRangeS    *[2]float64 `json:"runtime_range_s"`
	RuntimeSource    string      `json:"runtime_source"` // measured, predicted, prior, or "" when unknown
	// RuntimeAtLeast: the runtime (and so the SU) is only a lower bound,
	// proven by a run that reached its time limit here or on a bigger profile.
	RuntimeAtLeast bool `json:"runtime_at_least"`
	// The confidence of a measured runtime: how many completed runs it is
	// the median of, and their spread, (slowest - fastest) / median.
	RuntimeRuns   int      `json:"runtime_runs"`
	RuntimeSpread *float64 `json:"runtime_spread"`
	SUPerHour     float64  `json:"su_per_hour"`
	// Unpriced is why the site's formula gave the profile no price ("": it
	// did); SUPerHour is then 0 and SU nil, and the profile not eligible.
	Unpriced   string   `json:"unpriced,omitempty"`
	SU         *float64 `json:"su"`                  // three significant digits, as printed
	SUPerWork  *float64 `json:"su_per_work"`         // SU per work_unit
	WorkUnit   string   `json:"work_unit,omitempty"` // scaled to read well: 1M samples, ns
	QueueWaitS *float64 `json:"queue_wait_s"`
	TimeLimit  string   `json:"time_limit,omitempty"` // the --time to use when the script's is too short
	Eligible   bool     `json:"eligible"`
	Reason     string   `json:"reason"`

	capacity    float64
	shares      catalog.Shares
	beyondLimit string // why the --time it needs cannot be asked for
	pastLimit   bool   // no run can finish within the partition's limit: nothing to probe
	excluded    string // why the profile cannot run the job at all (a MIG slice for a multi-GPU job)
	boundBy     string // the run whose time limit bounds the runtime from below, in words
	onlyCapped  bool   // every run here reached its time limit or failed, with no work to measure
	// rateSpread is the spread of the runs' time per unit of work here,
	// where runs did different amounts of work: their runtimes differ by
	// their work, their rates only by the noise. nil: not known.
	rateSpread *float64
}

// Profile is the advice on the named profile, nil where there is none.
func (r *Recommendation) Profile(name string) *ProfileAdvice { return profileNamed(r.Profiles, name) }

// PastTimeLimit reports whether no run on the profile can finish within
// its partition's time limit (its predicted runtime, or a run that reached
// that limit, is beyond it): a probe there is no step to propose.
func (pa *ProfileAdvice) PastTimeLimit() bool { return pa.pastLimit }

// TimeLimitNote says why the --time the profile needs cannot all be asked
// for, "" where it can.
func (pa *ProfileAdvice) TimeLimitNote() string { return pa.beyondLimit }

// Recommend judges every profile of the site for the job and picks one.
// It is the engine's pipeline: the runs that speak for the job are
// selected, prepare gathers the evidence from them, judge weighs each
// profile on it, the slowdown leaves out the profiles too slow, decide
// picks one and the next step, and change writes it into the script. Each
// stage takes the values the ones before it returned and returns its own,
// with the notes it found, which the recommendation says in that order.
func Recommend(site *catalog.Site, job Job, opt Options) (*Recommendation, error) {
	opt = opt.withDefaults(site)
	base, err := site.JobFor(job.Resources)
	if err != nil {
		return nil, err
	}
	rec := &Recommendation{Fingerprint: job.Fingerprint, Site: site.Name, Script: job.Script, Objective: opt.Objective,
		Basis: BasisNone, Notes: append([]string{}, job.Notes...)}
	if base.Profile != nil {
		rec.Requested = &base.Profile.Name
	}
	use, note := gpuUse(job)
	sel := selectRuns(site, job, use)
	rec.MultiGPU, rec.Runs, rec.EarlierRuns = use, len(sel.runs), sel.earlier()
	rec.Notes = append(appendNote(rec.Notes, note), sel.notes...)
	if reason, ok := cpuOnly(site, job, base, sel.runs); ok {
		rec.CPUOnly, rec.Reason = true, reason
		return rec, nil
	}
	ev, notes := prepare(site, job, base, sel, use)
	rec.sayEvidence(ev)
	rec.Notes = append(rec.Notes, notes...)
	profiles, notes := judgeAll(site, ev, job, opt)
	rec.Notes = append(rec.Notes, notes...)
	rec.Profiles = applySlowdown(profiles, opt.MaxSlowdown)
	d := decide(site, ev, job, opt, rec.Profiles)
	rec.sayDecision(d)
	rec.Change, note = change(site, ev, job, opt, rec.Profiles, d)
	rec.Notes = appendNote(rec.Notes, note)
	return rec, nil
}

// sayEvidence sets what the recommendation says of the evidence: the
// prior, the memory need and what held it, the --mem to ask for, the time
// budget, the runtime model.
func (r *Recommendation) sayEvidence(ev evidence) {
	r.Prior = ev.prior
	if ev.need.Known() {
		r.GPUMemNeed = ev.need.JSON()
	}
	if c := ev.need.Ceiling; c != nil {
		r.GPUMemCeiling = c.JSON()
	}
	if h := ev.need.Holder; h.Kind != memory.HolderUnknown {
		r.GPUMemHolder = &h
	}
	r.Mem, r.MemReason = ev.host.mem, ev.host.reason
	r.TimeBudgetS = ev.budget
	r.Model = ev.scalingFree.Form() + "; " + ev.scalingFree.Source
	r.RuntimeWhy = ev.runtimeWhy
}

// cpuOnly is the reason for a script that asks for no GPU and has no runs
// on one (a command line that added a GPU would have left runs): no
// profile is judged, and the reason says what it costs and how to try a
// slice.
func cpuOnly(site *catalog.Site, job Job, base catalog.Job, runs []Run) (string, bool) {
	if base.Profile != nil || job.Resources.GPUCount() > 0 || len(runs) > 0 {
		return "", false
	}
	where := ""
	if base.Partition != "" {
		where = " in " + base.Partition
	}
	rate := ""
	if c, err := site.Charge(base); err == nil {
		rate = fmt.Sprintf(" (%s SU/h%s)", catalog.FormatSU(c.SUPerHour), where)
	}
	reason := fmt.Sprintf("this script asks for no GPU, so it runs on CPUs only%s and no GPU profile applies", rate)
	if ps := site.ProfilesBySize(); len(ps) > 0 {
		reason += fmt.Sprintf("; if it should use a GPU, add '#SBATCH %s' (%s, the smallest) and measure it with: %s",
			ps[0].Request, ps[0].Name, probeCommand(job.Script))
	}
	return reason, true
}

// sayDecision sets what the recommendation says of the decision: the
// profile recommended, why, the --time, the next step, and the notes (less
// the one its reason repeats).
func (r *Recommendation) sayDecision(d decision) {
	if d.choice != "" {
		r.Recommended = &r.Profile(d.choice).Profile
	}
	r.Basis, r.TimeLimit, r.Reason = d.basis, d.timeLimit, d.reason
	r.SetNext(d.next)
	if d.repeats != "" {
		r.Notes = slices.DeleteFunc(r.Notes, func(n string) bool { return n == d.repeats })
	}
	r.Notes = append(r.Notes, d.notes...)
}
