package advisor

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/memory"
	"github.com/migadvisor/migadvisor/advisor/outcome"
	"github.com/migadvisor/migadvisor/advisor/runmodel"
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
	Fingerprint string           `json:"fingerprint"`
	Site        string           `json:"site"`
	Script      string           `json:"script"`
	Objective   string           `json:"objective"`
	Requested   *string          `json:"requested"` // the profile the script asks for
	Recommended *string          `json:"recommended"`
	Basis       string           `json:"basis"`
	Runs        int              `json:"runs"`           // the script's runs the advice rests on (0 with a prior)
	EarlierRuns int              `json:"earlier_runs"`   // of those, runs of an earlier version of the script
	Reason      string           `json:"reason"`         // why the recommended profile, or why none
	Next        string           `json:"next,omitempty"` // the command that gets the missing evidence: NextStep.Command()
	NextStep    NextStep         `json:"next_step,omitzero"`
	TimeLimit   string           `json:"time_limit,omitempty"`
	Mem         string           `json:"mem,omitempty"`        // --mem to ask for after a host OOM
	MemReason   string           `json:"mem_reason,omitempty"` // the run that ran out of host memory, in words
	Prior       *PriorRef        `json:"prior,omitempty"`
	GPUMemNeed  *memory.NeedJSON `json:"gpu_mem_need"`
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

// PastTimeLimit reports whether no run on the profile can finish within
// its partition's time limit (its predicted runtime, or a run that reached
// that limit, is beyond it): a probe there is no step to propose.
func (pa *ProfileAdvice) PastTimeLimit() bool { return pa.pastLimit }

// TimeLimitNote says why the --time the profile needs cannot all be asked
// for, "" where it can.
func (pa *ProfileAdvice) TimeLimitNote() string { return pa.beyondLimit }

// Recommend judges every profile of the site for the job and picks one.
func Recommend(site *catalog.Site, job Job, opt Options) (*Recommendation, error) {
	opt = opt.withDefaults(site)
	base, err := site.JobFor(job.Resources)
	if err != nil {
		return nil, err
	}
	a := &analysis{site: site, job: job, opt: opt, base: base, runs: job.Runs, basis: BasisMeasured,
		refs: runmodel.ReferencesOf(site).Like(job.Resembles)}
	a.rec = &Recommendation{Fingerprint: job.Fingerprint, Site: site.Name, Script: job.Script, Objective: opt.Objective,
		Basis: BasisNone, Notes: append([]string{}, job.Notes...)}
	if base.Profile != nil {
		a.rec.Requested = &base.Profile.Name
	}
	a.gpuUse()
	a.selectRuns()
	if a.cpuOnly() {
		return a.rec, nil
	}
	if len(a.runs) == 0 && job.Prior != nil && a.rec.MultiGPU == nil {
		a.usePrior(job.Prior)
	}
	a.prepare()
	for _, p := range site.ProfilesBySize() {
		a.rec.Profiles = append(a.rec.Profiles, a.judge(p))
	}
	a.scaleWork()
	a.applySlowdown()
	a.decide()
	a.change()
	return a.rec, nil
}

// cpuOnly answers for a script that asks for no GPU and has no runs on
// one (a command line that added a GPU would have left runs): no profile is
// judged, and the reason says what it costs and how to try a slice.
func (a *analysis) cpuOnly() bool {
	if a.base.Profile != nil || a.job.Resources.GPUCount() > 0 || len(a.runs) > 0 {
		return false
	}
	a.rec.CPUOnly = true
	where := ""
	if a.base.Partition != "" {
		where = " in " + a.base.Partition
	}
	rate := ""
	if c, err := a.site.Charge(a.base); err == nil {
		rate = fmt.Sprintf(" (%s SU/h%s)", catalog.FormatSU(c.SUPerHour), where)
	}
	a.rec.Reason = fmt.Sprintf("this script asks for no GPU, so it runs on CPUs only%s and no GPU profile applies", rate)
	if ps := a.site.ProfilesBySize(); len(ps) > 0 {
		a.rec.Reason += fmt.Sprintf("; if it should use a GPU, add '#SBATCH %s' (%s, the smallest) and measure it with: %s",
			ps[0].Request, ps[0].Name, a.probeCommand())
	}
	return true
}

// analysis is the state of one recommendation.
type analysis struct {
	site  *catalog.Site
	job   Job
	opt   Options
	base  catalog.Job // the script's CPUs, memory, QoS and partition
	runs  []Run
	refs  runmodel.References // the site's reference benchmarks and the one the script looks like
	basis string              // of figures from runs: measured or prior
	rec   *Recommendation

	need    memory.Need
	memRuns []memory.Run
	points  []runmodel.Point // median completed time per profile
	// budget is the time limit every run ran to, where the script's runs
	// all end there (timeBudget): each run's time is then the time its
	// work took, and the other profiles' runtimes are for that work.
	budget      float64
	scaling     runmodel.Scaling
	scalingFree runmodel.Scaling // scaling, its fixed share lowered to meet the runs that reached their time limits
	work        float64          // the job's total work, when completed runs report it
	workUnit    string
	workPoints  []runmodel.Point // median seconds per unit of work per profile
	workScaling runmodel.Scaling
	// elsewhere are the times of an emulation on another GPU than the
	// site's, at the shares each slice ran at: not the site's times, but how
	// the job scales (emulated.go).
	elsewhere []runmodel.Point
}

func (a *analysis) usePrior(b *catalog.Benchmark) {
	a.runs, a.basis = RunsFromBenchmark(b), BasisPrior
	a.rec.Prior = &PriorRef{Benchmark: b.Name, Title: b.Title, Source: a.site.Name + " reference benchmark"}
	if set, ok := catalog.ReferenceFor(a.site); ok {
		a.rec.Prior.Source = set.Source
	}
	a.note("the script looks like the %s reference benchmark, %s; measure it for real with: %s",
		b.Name, b.Title, a.probeCommand())
}

// prepare estimates what every profile's judgement shares: the memory need,
// host memory, and the runtime models.
func (a *analysis) prepare() {
	a.memRuns = memoryRuns(a.site, a.runs, a.memoryHolders())
	a.need = memory.EstimateNeed(a.memRuns)
	if a.need.Known() {
		a.rec.GPUMemNeed = a.need.JSON()
	}
	if c := a.need.Ceiling; c != nil {
		a.rec.GPUMemCeiling = c.JSON()
	}
	if h := a.need.Holder; h.Kind != memory.HolderUnknown {
		a.rec.GPUMemHolder = &h
	}
	a.hostMemory()
	a.budget = a.timeBudget()
	a.rec.TimeBudgetS = a.budget
	a.points = a.profilePoints(func(r Run) bool { return a.measures(r) && r.Seconds > 0 }, func(r Run) float64 { return r.Seconds })
	// A profile whose median is only a bound (a run there reached its time
	// limit at or above it) has no measured time to scale from.
	a.points = slices.DeleteFunc(a.points, func(p runmodel.Point) bool {
		_, _, bound, _ := a.measuredRuntime(p.Profile)
		return bound > 0
	})
	fit, ok := a.explain(a.points)
	if shaped, shapedOK := a.shapeFromElsewhere(); shapedOK {
		fit, ok = shaped, true
	}
	if !ok {
		gpu, memory := a.utilizationOn(a.points)
		// The peers only here: most jobs need no prior, and the wrapper
		// weighs a few hundred.
		fit = runmodel.PriorScaling(a.refs.WithPeers(runmodel.PeerPoints(a.site, a.job.Peers)), gpu, memory, a.points)
	}
	a.scaling = fit
	// Profiles no time limit bounds are predicted by the model that meets
	// the bounds; those a bound covers keep it as their floor ("at least").
	a.scalingFree = fit.Within(a.points, a.timeLimitBounds())
	a.rec.Model = a.scalingFree.Form() + "; " + a.scalingFree.Source
	a.prepareWork()
	a.rec.RuntimeWhy = a.runtimeWhy()
	a.noteTimeouts()
	a.noteFailures()
}

// runtimeWhy says what the runtimes of profiles without a completed run
// rest on, or why there are none.
func (a *analysis) runtimeWhy() string {
	switch {
	case len(a.points) > 0:
		return a.scalingFree.Why
	case a.work > 0 && len(a.workPoints) > 0:
		return "from the work rates of runs that reached their time limits; " + a.workScaling.Why
	}
	if r, ok := a.emulatedElsewhere(); ok {
		return fmt.Sprintf("the runs were emulated on %s, whose times are not the site's GPU's: one run measured here gives the others, as the emulation scaled", r.Emulated)
	}
	return "no run completed, and none reported its rate of work: there is no time to scale from"
}

// timeBudget is the time limit every run of the script ran to, where at
// least two did, on one profile, and none ended otherwise: a time-budgeted
// job (a search, a training run for so many hours), or one that needs
// longer than it asks for. Either way it does a run's work in that time:
// its runs' time is that work's, and a slice is judged by the SU of the
// same work there, which is the SU per unit of work. 0: not so.
func (a *analysis) timeBudget() float64 {
	budget, n := 0.0, 0
	profile := ""
	for _, r := range a.runs {
		if r.Emulated != "" || r.Swept {
			continue
		}
		if !r.TimedOut || r.Seconds <= 0 || profile != "" && r.Profile != profile {
			return 0
		}
		profile, n = r.Profile, n+1
		if budget > 0 && math.Abs(r.Seconds-budget) > budgetSpread*budget {
			return 0
		}
		budget = max(budget, r.Seconds)
	}
	if n < 2 {
		return 0
	}
	return budget
}

// budgetSpread is how far apart the runs' times may lie and still be one
// budget: Slurm ends a job within a minute of its limit.
const budgetSpread = 0.02

// measures reports whether a run measured the time of its work: it
// completed, or it ran to the time budget every run runs to.
func (a *analysis) measures(r Run) bool {
	return r.Completed || a.budget > 0 && r.TimedOut && r.Emulated == "" && !r.Swept
}

// timeLimitBounds are the longest runs that reached their time limit on
// each profile where none completed: lower bounds the runtime model must
// meet.
func (a *analysis) timeLimitBounds() []runmodel.Point {
	best := map[string]runmodel.Point{}
	for _, r := range a.runs {
		if !r.TimedOut || r.Seconds <= 0 || slices.ContainsFunc(a.points, func(p runmodel.Point) bool { return p.Profile == r.Profile }) {
			continue
		}
		p, ok := a.site.Profile(r.Profile)
		if b, seen := best[r.Profile]; ok && (!seen || r.Seconds > b.Seconds) {
			best[r.Profile] = runmodel.Point{Profile: r.Profile, Shares: a.site.Shares(p), Seconds: r.Seconds}
		}
	}
	var bounds []runmodel.Point
	for _, p := range a.site.ProfilesBySize() {
		if b, ok := best[p.Name]; ok {
			bounds = append(bounds, b)
		}
	}
	return bounds
}

// failureNotes bounds the failed runs recommend explains one by one.
const failureNotes = 3

// noteFailures explains the runs that failed for a reason the table's
// outcome does not say (GPU OOMs, host OOMs and time limits have their own
// figures and notes): a missing command or output directory, a crash, a
// lost node.
func (a *analysis) noteFailures() {
	if _, _, ok := a.failsEverywhere(); ok {
		return // the reason says the script fails whatever the profile
	}
	var failed []Run
	var succeeded time.Time // the newest completed run's submission: the failures before it are fixed
	for _, r := range a.runs {
		if r.Completed && r.Submitted.After(succeeded) {
			succeeded = r.Submitted
		}
	}
	for _, r := range a.runs {
		switch r.Outcome.Kind {
		case outcome.CommandNotFound, outcome.NoOutputFile, outcome.Failed, outcome.NodeFailure, outcome.Preempted:
			if succeeded.IsZero() || r.Submitted.IsZero() || r.Submitted.After(succeeded) {
				failed = append(failed, r)
			}
		}
	}
	for i, r := range failed {
		if i == failureNotes {
			a.note("and %s failed: 'migadvisor history %s' lists them", plural(len(failed)-i, "more run"), slurm.ShellWord(a.job.Script))
			break
		}
		a.note("%s", failureNote(r))
	}
}

// failureNote is the note that explains a failed run.
func failureNote(r Run) string {
	return fmt.Sprintf("job %s on %s %s", r.JobID, r.Profile, r.outcomeText())
}

// scriptFailure is a run that failed for a reason no profile changes (a
// missing command, a missing output directory), when no run completed:
// the script needs fixing before any probe can measure it.
func (a *analysis) scriptFailure() (Run, bool) {
	var found Run
	for _, r := range a.runs {
		switch {
		case r.Completed:
			return Run{}, false
		case r.Outcome.Kind == outcome.CommandNotFound || r.Outcome.Kind == outcome.NoOutputFile:
			found = r
		}
	}
	return found, found.JobID != ""
}

// prepareWork reads the work the runs report, in the unit most of them use:
// of runs that completed or ran to their time limit (a run that crashed or
// ran out of memory measured no steady rate).
func (a *analysis) prepareWork() {
	units := map[string]int{}
	for _, r := range a.runs {
		if r.Work > 0 && r.Seconds > 0 && (r.Completed || r.TimedOut) {
			units[r.WorkUnit]++
		}
	}
	for u, n := range units {
		if n > units[a.workUnit] || n == units[a.workUnit] && u < a.workUnit {
			a.workUnit = u
		}
	}
	if len(units) == 0 {
		return
	}
	withWork := func(r Run) bool {
		return r.Work > 0 && r.Seconds > 0 && r.WorkUnit == a.workUnit && (r.Completed || r.TimedOut)
	}
	a.workPoints = a.profilePoints(withWork, func(r Run) float64 { return r.Seconds / r.Work })
	a.work = a.jobWork(withWork)
	a.workScaling = a.scaling
	if fit, ok := a.explain(a.workPoints); ok {
		a.workScaling = fit
	} else if a.work == 0 && len(a.points) > 1 {
		// The runs did different amounts of work, so their times differ by
		// their work as much as by their profile: the scaling fitted on the
		// times does not hold the rates. One profile's rate is all the
		// work says, scaled as a job measured on one profile is.
		gpu, memory := a.utilizationOn(a.workPoints)
		a.workScaling = runmodel.PriorScaling(a.refs.WithPeers(runmodel.PeerPoints(a.site, a.job.Peers)), gpu, memory, a.workPoints)
	}
}

// SameWork is how far apart the work of completed runs may be for them to
// have done the same job's work: a job that trains for a number of steps
// reports the same count on every profile, give or take a last batch.
const SameWork = 0.05

// jobWork is the work the job does, when its completed runs did the same
// (within SameWork); 0 when they did not. Runs that stop at a time (a
// GROMACS -maxh, a training budget, a throughput benchmark) do more work on
// a faster profile in the same time: the job has no one amount of work, and
// each profile's SU per unit of work comes from its own rate.
func (a *analysis) jobWork(withWork func(Run) bool) float64 {
	done := func(r Run) bool { return withWork(r) && r.Completed }
	work, sorted, ok := medianOf(a.runs, done, func(r Run) float64 { return r.Work })
	if !ok {
		return 0
	}
	if lo, hi := sorted[0], sorted[len(sorted)-1]; hi > lo*(1+SameWork) {
		a.note("the runs did different amounts of work (%s to %s %s): each profile's SU per %s is its own runs' rate, not one amount of work over its runtime",
			formatWork(lo), formatWork(hi), a.workUnit, singular(a.workUnit))
		return 0
	}
	return work
}

// formatWork writes an amount of work in three significant digits.
func formatWork(w float64) string { return strconv.FormatFloat(w, 'g', 3, 64) }

// profilePoints is the median of f over the runs that keep holds, per profile.
func (a *analysis) profilePoints(keep func(Run) bool, f func(Run) float64) []runmodel.Point {
	var points []runmodel.Point
	for _, p := range a.site.Profiles {
		onP := func(r Run) bool { return r.Profile == p.Name && keep(r) }
		if m, _, ok := medianOf(a.runs, onP, f); ok {
			points = append(points, runmodel.Point{Profile: p.Name, Shares: ranAt(a.site, &p, a.runs, onP), Seconds: m, Busy: busyOf(a.runs, onP, f)})
		}
	}
	return points
}

// utilizationOn is the mean GPU and memory utilization over the completed
// runs on the one measured profile that report them, each -1 when unknown:
// a prior from one profile.
func (a *analysis) utilizationOn(points []runmodel.Point) (gpu, memory float64) {
	if len(points) != 1 {
		return -1, -1
	}
	mean := func(f func(Run) float64) float64 {
		var sum float64
		n := 0
		for _, r := range a.runs {
			if v := f(r); v >= 0 && a.measures(r) && r.Profile == points[0].Profile {
				sum += v
				n++
			}
		}
		if n == 0 {
			return -1
		}
		return sum / float64(n)
	}
	return mean(func(r Run) float64 { return r.Utilization }), mean(func(r Run) float64 { return r.MemUtilization })
}

func (a *analysis) note(format string, args ...any) {
	a.rec.Notes = append(a.rec.Notes, fmt.Sprintf(format, args...))
}

func (a *analysis) noteTimeouts() {
	if a.budget > 0 {
		a.note("every run ran to its time limit, %s on %s: read as the time a run's work takes there, so the other profiles' runtimes and SU are for that work (SU per unit of work); with the same --time a run on a smaller slice does less of it",
			slurm.FormatSeconds(a.budget), a.points[0].Profile)
		return
	}
	for _, r := range a.runs {
		if r.TimedOut && r.Seconds > 0 {
			a.note("job %s reached its time limit on %s after %s: that time is a lower bound there",
				r.JobID, r.Profile, slurm.FormatSeconds(r.Seconds))
		}
	}
}

// hostMemory advises the --mem to ask for when runs were killed for host
// memory, and charges that memory from then on.
func (a *analysis) hostMemory() {
	asked := a.base.MemMiB
	worst := Run{}
	for _, r := range a.runs {
		if r.HostOOM && max(r.ReqMemMiB, 0) >= worst.ReqMemMiB {
			worst = r
		}
	}
	if !worst.HostOOM || asked > worst.ReqMemMiB && worst.ReqMemMiB > 0 {
		return // none, or the script already asks for more than the run that died
	}
	had := max(worst.ReqMemMiB, asked)
	advice := math.Ceil(max(2*had, 1.5*worst.MaxRSSMiB)/1024) * 1024
	a.base.MemMiB, a.base.MemWholeNode = advice, false
	a.rec.Mem = slurm.FormatMiB(int64(advice))
	used := ""
	if worst.MaxRSSMiB >= outcome.MinRSSMiB {
		// sacct samples RSS, so the kill often comes above its last
		// figure: said as wait and status say it.
		used = " (sacct saw its RSS reach " + outcome.MemText(worst.MaxRSSMiB) + " before the kill)"
	}
	a.rec.MemReason = fmt.Sprintf("job %s of this script ran out of host memory with --mem=%s%s", worst.JobID, slurm.FormatMiB(int64(had)), used)
	a.note("%s (%s), which is about --mem, not the GPU: ask for --mem=%s; SU is charged for that memory",
		a.rec.MemReason, worst.State, a.rec.Mem)
}

// NextKind is what the next step of a recommendation does.
type NextKind string

const (
	NextNone  NextKind = ""      // nothing to run: the advice stands, or no run would help
	NextProbe NextKind = "probe" // measure the script: recommend --probe
	NextLint  NextKind = "lint"  // fix what sbatch or the site would reject first
)

// NextStep is the step that gets the missing evidence, as data: callers act
// on Kind, and Command is the line shown to users.
type NextStep struct {
	Kind     NextKind `json:"kind"`
	Profiles []string `json:"profiles,omitempty"` // the probe's; empty: every profile
	Time     string   `json:"time,omitempty"`     // the probe's --time; "": the script's
	Script   string   `json:"script"`             // as the user named it; "" reads JOB.sh
}

// ProbeStep is the probe of script on profiles (none: all) with --time limit.
func ProbeStep(script string, profiles []string, limit string) NextStep {
	return NextStep{Kind: NextProbe, Profiles: profiles, Time: limit, Script: script}
}

// LintStep is the lint of script, before anything is measured.
func LintStep(script string) NextStep {
	return NextStep{Kind: NextLint, Script: script}
}

// Command is the step as a command line a user can paste; "" for NextNone.
func (n NextStep) Command() string {
	script := n.Script
	if script == "" {
		script = "JOB.sh"
	}
	switch n.Kind {
	case NextProbe:
		cmd := "migadvisor recommend --probe"
		if len(n.Profiles) > 0 {
			cmd += " --profiles " + strings.Join(n.Profiles, ",")
		}
		if n.Time != "" {
			cmd += " --time " + n.Time
		}
		return cmd + " " + slurm.ShellWord(script)
	case NextLint:
		return "migadvisor lint " + slurm.ShellWord(script)
	}
	return ""
}

// SetNext makes step the recommendation's next step, and Next its command
// line, so that the two never disagree.
func (r *Recommendation) SetNext(step NextStep) {
	r.NextStep, r.Next = step, step.Command()
}

// probeStep is the step that measures the script on profiles (a
// comma-separated list, "" for all) with the --time given ("" for the
// script's).
func (a *analysis) probeStep(limit string, profiles ...string) NextStep {
	return ProbeStep(a.job.Script, profiles, limit)
}

// probeCommand is the command line of the probe of every profile, for the
// notes and reasons that name it.
func (a *analysis) probeCommand() string {
	return a.probeStep("").Command()
}

func joinProfiles(ps []string) string { return strings.Join(ps, ", ") }

// selectRuns keeps the runs that speak for this job: those on as many GPUs
// as it uses (a 2-GPU run's time and SU are not a 1-GPU job's), and, once
// this version of the script has runs that ran, only its own: its earlier
// versions stand in only while it has none.
func (a *analysis) selectRuns() {
	want := 1
	if a.rec.MultiGPU != nil {
		want = a.rec.MultiGPU.GPUs
	}
	var kept []Run
	otherGPUs, exact := 0, false
	for _, r := range a.job.Runs {
		if max(r.GPUs, 1) != want {
			otherGPUs++
			continue
		}
		kept = append(kept, r)
		exact = exact || !r.Earlier && ran(r)
	}
	if otherGPUs > 0 {
		a.note("%s on another number of GPUs than this job's %d left out", plural(otherGPUs, "run"), want)
	}
	if exact {
		own, earlier := kept[:0:0], 0
		for _, r := range kept {
			if r.Earlier {
				earlier++
			} else {
				own = append(own, r)
			}
		}
		if earlier > 0 {
			a.note("%s of an earlier version left out: this version has runs of its own", plural(earlier, "run"))
		}
		kept = own
	}
	a.elsewhere = elsewherePoints(a.site, kept)
	kept = measuredWins(a.site, kept)
	if note := emulatedNote(a.site, kept); note != "" {
		a.note("%s; measure them on the real slices: %s", note, a.probeCommand())
	}
	a.runs = kept
	a.rec.Runs = len(kept)
	for _, r := range kept {
		if r.Earlier {
			a.rec.EarlierRuns++
		}
	}
}

// ran reports whether a run says something about the job: it completed,
// failed or reached a limit (a job cancelled before it started does not).
func ran(r Run) bool { return r.Ran() }

// Ran reports whether the run says something about the job: it completed,
// failed or reached a limit (a job cancelled before it started does not).
func (r Run) Ran() bool {
	return r.Completed || r.GPUOOM || r.HostOOM || r.TimedOut || r.State == "FAILED"
}
