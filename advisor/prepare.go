package advisor

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// The first stage: prepare gathers, once, what every profile's judgement
// reads: the runs that speak for the job, its memory need, the --mem a
// host OOM calls for, its times per profile and the runtime model that
// scales them, its work. Every function here takes values and returns
// them; the stages after read the evidence and never change it.

// evidence is what the job's runs (or the reference benchmark standing
// in for them) say, on one site.
type evidence struct {
	base     catalog.Job // the script's CPUs, memory (raised after a host OOM), QoS and partition
	runs     []Run
	basis    string              // of figures from runs: measured or prior
	refs     runmodel.References // the site's reference benchmarks and the one the script looks like
	multiGPU *GPUUse             // a job of several GPUs; nil: one
	prior    *PriorRef           // the reference benchmark that stands in for runs; nil: none
	// elsewhere are the times of an emulation on another GPU than the
	// site's, at the shares each slice ran at: not the site's times, but how
	// the job scales (emulated.go).
	elsewhere []runmodel.Point

	memRuns []memory.Run
	need    memory.Need
	host    hostAdvice
	// budget is the time limit every run ran to, where the script's runs
	// all end there (timeBudget): each run's time is then the time its
	// work took, and the other profiles' runtimes are for that work.
	budget      float64
	points      []runmodel.Point // median completed time per profile
	scaling     runmodel.Scaling
	scalingFree runmodel.Scaling // scaling, its fixed share lowered to meet the runs that reached their time limits
	workSeen
	runtimeWhy string // what the runtimes of profiles without a completed run rest on
}

// workSeen is the work the runs report, in the unit most of them use.
type workSeen struct {
	work        float64 // the job's total work, when completed runs report it
	workUnit    string
	workPoints  []runmodel.Point // median seconds per unit of work per profile
	workScaling runmodel.Scaling
}

// hostAdvice is the --mem to ask for after runs were killed for host
// memory, and why; "" where none was.
type hostAdvice struct {
	mem, reason string
	state       string // the killed run's
}

// selection is the runs that speak for the job, and what was left out.
type selection struct {
	runs      []Run
	elsewhere []runmodel.Point
	notes     []string
}

// earlier counts the runs of an earlier version of the script.
func (s selection) earlier() int {
	n := 0
	for _, r := range s.runs {
		if r.Earlier {
			n++
		}
	}
	return n
}

// selectRuns keeps the runs that speak for this job: those on as many
// GPUs as it uses (a 2-GPU run's time and SU are not a 1-GPU job's), and,
// once this version of the script has runs that ran, only its own: its
// earlier versions stand in only while it has none. Emulated runs give way
// to measured ones (emulated.go).
func selectRuns(site *catalog.Site, job Job, use *GPUUse) selection {
	want := 1
	if use != nil {
		want = use.GPUs
	}
	var sel selection
	kept, other := onGPUs(job.Runs, want)
	if other > 0 {
		sel.notes = append(sel.notes, fmt.Sprintf("%s on another number of GPUs than this job's %d left out", plural(other, "run"), want))
	}
	kept, earlier := ownVersion(kept)
	if earlier > 0 {
		sel.notes = append(sel.notes, fmt.Sprintf("%s of an earlier version left out: this version has runs of its own", plural(earlier, "run")))
	}
	sel.elsewhere = elsewherePoints(site, kept)
	sel.runs = measuredWins(site, kept)
	if note := emulatedNote(site, sel.runs); note != "" {
		sel.notes = append(sel.notes, fmt.Sprintf("%s; measure them on the real slices: %s", note, probeCommand(job.Script)))
	}
	return sel
}

// onGPUs are the runs on want GPUs, and how many ran on another number.
func onGPUs(runs []Run, want int) (kept []Run, other int) {
	for _, r := range runs {
		if max(r.GPUs, 1) != want {
			other++
			continue
		}
		kept = append(kept, r)
	}
	return kept, other
}

// ownVersion drops an earlier version's runs once this version has runs
// that ran, and says how many it dropped.
func ownVersion(runs []Run) ([]Run, int) {
	if !slices.ContainsFunc(runs, func(r Run) bool { return !r.Earlier && ran(r) }) {
		return runs, 0
	}
	own, earlier := runs[:0:0], 0
	for _, r := range runs {
		if r.Earlier {
			earlier++
		} else {
			own = append(own, r)
		}
	}
	return own, earlier
}

// prepare gathers the evidence from the selected runs, or, where there are
// none, from the reference benchmark the script looks like; it returns the
// notes on what it found.
func prepare(site *catalog.Site, job Job, base catalog.Job, sel selection, use *GPUUse) (evidence, []string) {
	ev := evidence{base: base, runs: sel.runs, basis: BasisMeasured, multiGPU: use, elsewhere: sel.elsewhere,
		refs: runmodel.ReferencesOf(site).Like(job.Resembles)}
	var notes []string
	if len(ev.runs) == 0 && job.Prior != nil && use == nil {
		ev.runs, ev.basis, ev.prior = RunsFromBenchmark(job.Prior), BasisPrior, priorRef(site, job.Prior)
		notes = append(notes, fmt.Sprintf("the script looks like the %s reference benchmark, %s; measure it for real with: %s",
			job.Prior.Name, job.Prior.Title, probeCommand(job.Script)))
	}
	ev.memRuns = memoryRuns(site, ev.runs, memoryHolders(job, ev.runs))
	ev.need = memory.EstimateNeed(ev.memRuns)
	ev.base, ev.host = hostMemory(base, ev.runs)
	if ev.host.mem != "" {
		notes = append(notes, ev.host.note())
	}
	ev.budget = timeBudget(ev.runs)
	ev.points = ev.measuredPoints(site)
	ev.scaling = ev.fit(site, job.Peers)
	// Profiles no time limit bounds are predicted by the model that meets
	// the bounds; those a bound covers keep it as their floor ("at least").
	ev.scalingFree = ev.scaling.Within(ev.points, ev.timeLimitBounds(site))
	var note string
	ev.workSeen, note = ev.workOf(site, job.Peers)
	if note != "" {
		notes = append(notes, note)
	}
	ev.runtimeWhy = ev.whyRuntimes()
	notes = append(notes, ev.timeoutNotes()...)
	return ev, append(notes, failureNotes(site, job.Script, ev.runs)...)
}

// priorRef names the reference benchmark a prior comes from.
func priorRef(site *catalog.Site, b *catalog.Benchmark) *PriorRef {
	ref := &PriorRef{Benchmark: b.Name, Title: b.Title, Source: site.Name + " reference benchmark"}
	if set, ok := catalog.ReferenceFor(site); ok {
		ref.Source = set.Source
	}
	return ref
}

// measuredPoints are the median times of the runs that measured their
// work, per profile. A profile whose median is only a bound (a run there
// reached its time limit at or above it) has no measured time to scale
// from.
func (ev *evidence) measuredPoints(site *catalog.Site) []runmodel.Point {
	points := profilePoints(site, ev.runs, func(r Run) bool { return ev.measures(r) && r.Seconds > 0 }, func(r Run) float64 { return r.Seconds })
	return slices.DeleteFunc(points, func(p runmodel.Point) bool {
		_, _, bound, _ := ev.measuredRuntime(site, p.Profile)
		return bound > 0
	})
}

// fit is the runtime model of the job's times: the explanation its points
// support, else the one an emulation elsewhere gives them, else a prior
// from the reference benchmarks and the peers.
func (ev *evidence) fit(site *catalog.Site, peers []runmodel.Peer) runmodel.Scaling {
	fit, ok := explain(ev.runs, ev.refs, ev.points)
	if shaped, shapedOK := shapeFromElsewhere(ev.runs, ev.refs, ev.points, ev.elsewhere); shapedOK {
		fit, ok = shaped, true
	}
	if ok {
		return fit
	}
	gpu, memory := ev.utilizationOn(ev.points)
	// The peers only here: most jobs need no prior, and the wrapper
	// weighs a few hundred.
	return runmodel.PriorScaling(ev.refs.WithPeers(runmodel.PeerPoints(site, peers)), gpu, memory, ev.points)
}

// whyRuntimes says what the runtimes of profiles without a completed run
// rest on, or why there are none.
func (ev *evidence) whyRuntimes() string {
	switch {
	case len(ev.points) > 0:
		return ev.scalingFree.Why
	case ev.work > 0 && len(ev.workPoints) > 0:
		return "from the work rates of runs that reached their time limits; " + ev.workScaling.Why
	}
	if r, ok := emulatedElsewhere(ev.runs); ok {
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
func timeBudget(runs []Run) float64 {
	budget, n := 0.0, 0
	profile := ""
	for _, r := range runs {
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
func (ev *evidence) measures(r Run) bool {
	return r.Completed || ev.budget > 0 && r.TimedOut && r.Emulated == "" && !r.Swept
}

// measuredRuntime is the median time of the profile's runs where one
// completed, the sorted times, and the longest run that reached its time
// limit at or above the median (0 if none): the job's own runs that reached
// their limit count at the time they ran, a lower bound each, so such a run
// makes the median only a bound. A reference benchmark's rows are its
// completed runs alone.
func (ev *evidence) measuredRuntime(site *catalog.Site, profile string) (m float64, sorted []float64, bound float64, ok bool) {
	if shifted(site, profile, ev.runs) {
		return 0, nil, 0, false // emulated with more than the slice has: predicted from where it ran
	}
	completed := func(r Run) bool { return r.Profile == profile && ev.measures(r) && r.Seconds > 0 }
	if !slices.ContainsFunc(ev.runs, completed) {
		return 0, nil, 0, false
	}
	keep := completed
	if ev.basis != BasisPrior {
		keep = func(r Run) bool { return completed(r) || r.Profile == profile && r.TimedOut && r.Seconds > 0 }
	}
	m, sorted, ok = medianOf(ev.runs, keep, func(r Run) float64 { return r.Seconds })
	for _, r := range ev.runs {
		if keep(r) && r.TimedOut && r.Seconds >= m && ev.budget == 0 {
			bound = max(bound, r.Seconds)
		}
	}
	return m, sorted, bound, ok
}

// timeLimitBounds are the longest runs that reached their time limit on
// each profile where none completed: lower bounds the runtime model must
// meet.
func (ev *evidence) timeLimitBounds(site *catalog.Site) []runmodel.Point {
	best := map[string]runmodel.Point{}
	for _, r := range ev.runs {
		if !r.TimedOut || r.Seconds <= 0 || slices.ContainsFunc(ev.points, func(p runmodel.Point) bool { return p.Profile == r.Profile }) {
			continue
		}
		p, ok := site.Profile(r.Profile)
		if b, seen := best[r.Profile]; ok && (!seen || r.Seconds > b.Seconds) {
			best[r.Profile] = runmodel.Point{Profile: r.Profile, Shares: site.Shares(p), Seconds: r.Seconds}
		}
	}
	var bounds []runmodel.Point
	for _, p := range site.ProfilesBySize() {
		if b, ok := best[p.Name]; ok {
			bounds = append(bounds, b)
		}
	}
	return bounds
}

// profilePoints is the median of f over the runs that keep holds, per profile.
func profilePoints(site *catalog.Site, runs []Run, keep func(Run) bool, f func(Run) float64) []runmodel.Point {
	var points []runmodel.Point
	for _, p := range site.Profiles {
		onP := func(r Run) bool { return r.Profile == p.Name && keep(r) }
		if m, _, ok := medianOf(runs, onP, f); ok {
			emulated := slices.ContainsFunc(runs, func(r Run) bool { return onP(r) && r.Emulated != "" })
			points = append(points, runmodel.Point{Profile: p.Name, Shares: ranAt(site, &p, runs, onP), Seconds: m, Busy: busyOf(runs, onP, f), Emulated: emulated})
		}
	}
	return points
}

// utilizationOn is the mean GPU and memory utilization over the completed
// runs on the one measured profile that report them, each -1 when unknown:
// a prior from one profile.
func (ev *evidence) utilizationOn(points []runmodel.Point) (gpu, memory float64) {
	if len(points) != 1 {
		return -1, -1
	}
	mean := func(f func(Run) float64) float64 {
		var sum float64
		n := 0
		for _, r := range ev.runs {
			if v := f(r); v >= 0 && ev.measures(r) && r.Profile == points[0].Profile {
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

// workOf reads the work the runs report, in the unit most of them use:
// of runs that completed or ran to their time limit (a run that crashed or
// ran out of memory measured no steady rate). The note says where the
// runs did different amounts of work.
func (ev *evidence) workOf(site *catalog.Site, peers []runmodel.Peer) (workSeen, string) {
	if !slices.ContainsFunc(ev.runs, reportsWork) {
		return workSeen{}, ""
	}
	w := workSeen{workUnit: mostUsedUnit(ev.runs)}
	withWork := func(r Run) bool { return reportsWork(r) && r.WorkUnit == w.workUnit }
	w.workPoints = profilePoints(site, ev.runs, withWork, func(r Run) float64 { return r.Seconds / r.Work })
	var note string
	w.work, note = jobWork(ev.runs, withWork, w.workUnit)
	w.workScaling = ev.scaling
	if fit, ok := explain(ev.runs, ev.refs, w.workPoints); ok {
		w.workScaling = fit
	} else if w.work == 0 && len(ev.points) > 1 {
		// The runs did different amounts of work, so their times differ by
		// their work as much as by their profile: the scaling fitted on the
		// times does not hold the rates. One profile's rate is all the
		// work says, scaled as a job measured on one profile is.
		gpu, memory := ev.utilizationOn(w.workPoints)
		w.workScaling = runmodel.PriorScaling(ev.refs.WithPeers(runmodel.PeerPoints(site, peers)), gpu, memory, w.workPoints)
	}
	return w, note
}

// reportsWork reports whether a run measured a rate of work: it reported
// its work and completed or ran to its time limit.
func reportsWork(r Run) bool {
	return r.Work > 0 && r.Seconds > 0 && (r.Completed || r.TimedOut)
}

// mostUsedUnit is the work unit most runs that report work use, the first
// in order of a tie; "" where none does (or they count in no unit).
func mostUsedUnit(runs []Run) string {
	units := map[string]int{}
	for _, r := range runs {
		if reportsWork(r) {
			units[r.WorkUnit]++
		}
	}
	unit := ""
	for u, n := range units {
		if n > units[unit] || n == units[unit] && u < unit {
			unit = u
		}
	}
	return unit
}

// SameWork is how far apart the work of completed runs may be for them to
// have done the same job's work: a job that trains for a number of steps
// reports the same count on every profile, give or take a last batch.
const SameWork = 0.05

// jobWork is the work the job does, when its completed runs did the same
// (within SameWork); 0 when they did not, and the note that says so. Runs
// that stop at a time (a GROMACS -maxh, a training budget, a throughput
// benchmark) do more work on a faster profile in the same time: the job
// has no one amount of work, and each profile's SU per unit of work comes
// from its own rate.
func jobWork(runs []Run, withWork func(Run) bool, unit string) (float64, string) {
	done := func(r Run) bool { return withWork(r) && r.Completed }
	work, sorted, ok := medianOf(runs, done, func(r Run) float64 { return r.Work })
	if !ok {
		return 0, ""
	}
	if lo, hi := sorted[0], sorted[len(sorted)-1]; hi > lo*(1+SameWork) {
		return 0, fmt.Sprintf("the runs did different amounts of work (%s to %s %s): each profile's SU per %s is its own runs' rate, not one amount of work over its runtime",
			formatWork(lo), formatWork(hi), unit, singular(unit))
	}
	return work, ""
}

// formatWork writes an amount of work in three significant digits.
func formatWork(w float64) string { return strconv.FormatFloat(w, 'g', 3, 64) }

// timeoutNotes say how the runs that reached their time limit are read:
// as the time budget every run runs to, or each a lower bound.
func (ev *evidence) timeoutNotes() []string {
	if ev.budget > 0 {
		return []string{fmt.Sprintf("every run ran to its time limit, %s on %s: read as the time a run's work takes there, so the other profiles' runtimes and SU are for that work (SU per unit of work); with the same --time a run on a smaller slice does less of it",
			slurm.FormatSeconds(ev.budget), ev.points[0].Profile)}
	}
	var notes []string
	for _, r := range ev.runs {
		if r.TimedOut && r.Seconds > 0 {
			notes = append(notes, fmt.Sprintf("job %s reached its time limit on %s after %s: that time is a lower bound there",
				r.JobID, r.Profile, slurm.FormatSeconds(r.Seconds)))
		}
	}
	return notes
}

// hostMemory advises the --mem to ask for when runs were killed for host
// memory, and returns the job charged for that memory from then on.
func hostMemory(base catalog.Job, runs []Run) (catalog.Job, hostAdvice) {
	asked := base.MemMiB
	worst := Run{}
	for _, r := range runs {
		if r.HostOOM && max(r.ReqMemMiB, 0) >= worst.ReqMemMiB {
			worst = r
		}
	}
	if !worst.HostOOM || asked > worst.ReqMemMiB && worst.ReqMemMiB > 0 {
		return base, hostAdvice{} // none, or the script already asks for more than the run that died
	}
	had := max(worst.ReqMemMiB, asked)
	advice := math.Ceil(max(2*had, 1.5*worst.MaxRSSMiB)/1024) * 1024
	base.MemMiB, base.MemWholeNode = advice, false
	used := ""
	if worst.MaxRSSMiB >= outcome.MinRSSMiB {
		// sacct samples RSS, so the kill often comes above its last
		// figure: said as wait and status say it.
		used = " (sacct saw its RSS reach " + outcome.MemText(worst.MaxRSSMiB) + " before the kill)"
	}
	return base, hostAdvice{mem: slurm.FormatMiB(int64(advice)), state: worst.State,
		reason: fmt.Sprintf("job %s of this script ran out of host memory with --mem=%s%s", worst.JobID, slurm.FormatMiB(int64(had)), used)}
}

// note is the note that says the advice.
func (h hostAdvice) note() string {
	return fmt.Sprintf("%s (%s), which is about --mem, not the GPU: ask for --mem=%s; SU is charged for that memory", h.reason, h.state, h.mem)
}

// failureNotesMax bounds the failed runs recommend explains one by one.
const failureNotesMax = 3

// failureNotes explain the runs that failed for a reason the table's
// outcome does not say (GPU OOMs, host OOMs and time limits have their own
// figures and notes): a missing command or output directory, a crash, a
// lost node. The failures before the newest completed run are fixed.
func failureNotes(site *catalog.Site, script string, runs []Run) []string {
	if _, _, ok := failsEverywhere(site, runs); ok {
		return nil // the reason says the script fails whatever the profile
	}
	var succeeded time.Time
	for _, r := range runs {
		if r.Completed && r.Submitted.After(succeeded) {
			succeeded = r.Submitted
		}
	}
	var failed []Run
	for _, r := range runs {
		switch r.Outcome.Kind {
		case outcome.CommandNotFound, outcome.NoOutputFile, outcome.Failed, outcome.NodeFailure, outcome.Preempted:
			if succeeded.IsZero() || r.Submitted.IsZero() || r.Submitted.After(succeeded) {
				failed = append(failed, r)
			}
		}
	}
	var notes []string
	for i, r := range failed {
		if i == failureNotesMax {
			return append(notes, fmt.Sprintf("and %s failed: 'migadvisor history %s' lists them", plural(len(failed)-i, "more run"), slurm.ShellWord(script)))
		}
		notes = append(notes, failureNote(r))
	}
	return notes
}

// failsEverywhere reports a script that failed for a reason of its own on
// every profile it ran on, two or more, and never completed (a Python
// import that fails, a bad argument): no profile changes that. It returns
// the profiles, smallest first, and the newest failed run.
func failsEverywhere(site *catalog.Site, runs []Run) ([]string, Run, bool) {
	var newest Run
	failedOn := map[string]bool{}
	for _, r := range runs {
		if r.Completed {
			return nil, Run{}, false
		}
		switch r.Outcome.Kind {
		case outcome.Failed, outcome.CommandNotFound, outcome.NoOutputFile:
			failedOn[r.Profile] = true
			if newest.JobID == "" || r.Submitted.After(newest.Submitted) {
				newest = r
			}
		case outcome.Cancelled, outcome.NodeFailure, outcome.Preempted, "":
			// says nothing of the script
		default:
			return nil, Run{}, false // completed, or ran out of memory or time: the profile matters
		}
	}
	if len(failedOn) < 2 {
		return nil, Run{}, false
	}
	var profiles []string
	for _, p := range site.ProfilesBySize() {
		if failedOn[p.Name] {
			profiles = append(profiles, p.Name)
		}
	}
	return profiles, newest, true
}
