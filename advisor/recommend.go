package advisor

import (
	"fmt"
	"math"
	"slices"
	"strings"

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
		o.LowRiskShare = DefaultLowRiskShare
	}
	return o
}

// Job is what a recommendation is for: a script, what it asks for, and its evidence.
type Job struct {
	Script      string // the path, as the user gave it, for the commands in the advice
	Fingerprint string
	Resources   slurm.Resources
	Runs        []Run
	Prior       *catalog.Benchmark // stands in for Runs when there are none
	QueueWaitS  map[string]float64 // median queue wait per profile
}

// Recommendation is the advice for one script.
type Recommendation struct {
	Fingerprint string          `json:"fingerprint"`
	Site        string          `json:"site"`
	Script      string          `json:"script"`
	Objective   string          `json:"objective"`
	Requested   *string         `json:"requested"` // the profile the script asks for
	Recommended *string         `json:"recommended"`
	Basis       string          `json:"basis"`
	Reason      string          `json:"reason"`         // why the recommended profile, or why none
	Next        string          `json:"next,omitempty"` // the command that gets the missing evidence
	TimeLimit   string          `json:"time_limit,omitempty"`
	Mem         string          `json:"mem,omitempty"` // --mem to ask for after a host OOM
	Prior       *PriorRef       `json:"prior,omitempty"`
	GPUMemNeed  *MemoryNeedJSON `json:"gpu_mem_need"`
	Model       string          `json:"runtime_model"`
	Profiles    []ProfileAdvice `json:"profiles"`
	Notes       []string        `json:"notes"`
}

// PriorRef names the reference benchmark a prior comes from.
type PriorRef struct {
	Benchmark string `json:"benchmark"`
	Title     string `json:"title"`
	Source    string `json:"source"`
}

// MemoryNeedJSON is the estimated GPU memory need.
type MemoryNeedJSON struct {
	MiB    float64 `json:"mib"`
	Runs   int     `json:"runs"`
	Source string  `json:"source"`
}

// ProfileAdvice is the judgement on one profile.
type ProfileAdvice struct {
	Profile       string      `json:"profile"`
	Partition     string      `json:"partition,omitempty"` // where it would run
	Runs          int         `json:"runs"`
	Completed     int         `json:"completed"`
	TimedOut      int         `json:"timed_out"`
	HostOOM       int         `json:"host_oom"` // runs killed for host memory
	OOMObserved   bool        `json:"oom_observed"`
	GPUMemNeedMiB *float64    `json:"gpu_mem_need_mib"`
	UsableMiB     float64     `json:"usable_mib"`
	OOMRisk       string      `json:"oom_risk"`
	OOMRiskReason string      `json:"oom_risk_reason"`
	RuntimeS      *float64    `json:"runtime_s"`
	RuntimeRangeS *[2]float64 `json:"runtime_range_s"`
	RuntimeSource string      `json:"runtime_source"` // measured, predicted, prior, or "" when unknown
	SUPerHour     float64     `json:"su_per_hour"`
	SU            *float64    `json:"su"`
	SUPerWork     *float64    `json:"su_per_work"`
	WorkUnit      string      `json:"work_unit,omitempty"`
	QueueWaitS    *float64    `json:"queue_wait_s"`
	TimeLimit     string      `json:"time_limit,omitempty"` // the --time to use when the script's is too short
	Eligible      bool        `json:"eligible"`
	Reason        string      `json:"reason"`

	capacity    float64
	beyondLimit string // why the --time it needs cannot be asked for
}

// Recommend judges every profile of the site for the job and picks one.
func Recommend(site *catalog.Site, job Job, opt Options) (*Recommendation, error) {
	opt = opt.withDefaults(site)
	base, err := site.JobFor(job.Resources)
	if err != nil {
		return nil, err
	}
	a := &analysis{site: site, job: job, opt: opt, base: base, runs: job.Runs, basis: BasisMeasured}
	a.rec = &Recommendation{Fingerprint: job.Fingerprint, Site: site.Name, Script: job.Script, Objective: opt.Objective,
		Basis: BasisNone, Notes: []string{}}
	if base.Profile != nil {
		a.rec.Requested = &base.Profile.Name
	}
	if len(a.runs) == 0 && job.Prior != nil {
		a.usePrior(job.Prior)
	}
	a.prepare()
	for _, p := range OrderedProfiles(site) {
		a.rec.Profiles = append(a.rec.Profiles, a.judge(p))
	}
	a.applySlowdown()
	a.decide()
	return a.rec, nil
}

// analysis is the state of one recommendation.
type analysis struct {
	site  *catalog.Site
	job   Job
	opt   Options
	base  catalog.Job // the script's CPUs, memory, QoS and partition
	runs  []Run
	basis string // of figures from runs: measured or prior
	rec   *Recommendation

	need        MemoryNeed
	memRuns     []MemoryRun
	points      []Point // median completed time per profile
	scaling     Scaling
	work        float64 // the job's total work, when completed runs report it
	workUnit    string
	workPoints  []Point // median seconds per unit of work per profile
	workScaling Scaling
}

func (a *analysis) usePrior(b *catalog.Benchmark) {
	a.runs, a.basis = RunsFromBenchmark(b), BasisPrior
	a.rec.Prior = &PriorRef{Benchmark: b.Name, Title: b.Title, Source: a.site.Name + " reference benchmark"}
	if set, ok := catalog.ReferenceFor(a.site); ok {
		a.rec.Prior.Source = set.Source
	}
	a.note("no runs of this script yet: the figures are the %s reference benchmark's (%s), which it looks like; measure it for real with: %s",
		b.Name, b.Title, a.probeCommand(""))
}

// prepare estimates what every profile's judgement shares: the memory need,
// host memory, and the runtime models.
func (a *analysis) prepare() {
	a.memRuns = memoryRuns(a.site, a.runs)
	a.need = EstimateNeed(a.memRuns)
	if a.need.Known() {
		a.rec.GPUMemNeed = &MemoryNeedJSON{MiB: math.Round(a.need.MiB), Runs: a.need.Runs, Source: a.need.Source}
	}
	a.hostMemory()
	a.points = a.profilePoints(func(r Run) bool { return r.Completed && r.Seconds > 0 }, func(r Run) float64 { return r.Seconds })
	fit, ok := FitScaling(a.points)
	if !ok {
		fit = PriorScaling(a.site, a.utilisation())
	}
	a.scaling = fit
	a.rec.Model = "Amdahl in profile capacity; " + fit.Source
	a.prepareWork()
	a.noteTimeouts()
}

// prepareWork reads the work the runs report, in the unit most of them use.
func (a *analysis) prepareWork() {
	units := map[string]int{}
	for _, r := range a.runs {
		if r.Work > 0 && r.Seconds > 0 {
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
	withWork := func(r Run) bool { return r.Work > 0 && r.Seconds > 0 && r.WorkUnit == a.workUnit }
	a.workPoints = a.profilePoints(withWork, func(r Run) float64 { return r.Seconds / r.Work })
	a.work, _, _ = medianOf(a.runs, func(r Run) bool { return withWork(r) && r.Completed }, func(r Run) float64 { return r.Work })
	a.workScaling = a.scaling
	if fit, ok := FitScaling(a.workPoints); ok {
		a.workScaling = fit
	}
}

// profilePoints is the median of f over the runs that keep holds, per profile.
func (a *analysis) profilePoints(keep func(Run) bool, f func(Run) float64) []Point {
	var points []Point
	for _, p := range a.site.Profiles {
		onP := func(r Run) bool { return r.Profile == p.Name && keep(r) }
		if m, _, ok := medianOf(a.runs, onP, f); ok {
			points = append(points, Point{Profile: p.Name, Capacity: a.site.Capacity(&p), Seconds: m})
		}
	}
	return points
}

// utilisation is the mean GPU utilisation over the runs that report it, or -1.
func (a *analysis) utilisation() float64 {
	var sum float64
	n := 0
	for _, r := range a.runs {
		if r.Utilisation >= 0 {
			sum += r.Utilisation
			n++
		}
	}
	if n == 0 {
		return -1
	}
	return sum / float64(n)
}

func (a *analysis) note(format string, args ...any) {
	a.rec.Notes = append(a.rec.Notes, fmt.Sprintf(format, args...))
}

func (a *analysis) noteTimeouts() {
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
	a.base.MemMiB = advice
	a.rec.Mem = slurm.FormatMiB(int64(advice))
	used := ""
	if worst.MaxRSSMiB > 0 {
		used = ", peak RSS " + slurm.FormatMiB(int64(worst.MaxRSSMiB))
	}
	a.note("job %s ran out of host memory (%s with %s%s), which is about --mem, not the GPU: ask for --mem=%s; the SU figures are for that memory",
		worst.JobID, worst.State, slurm.FormatMiB(int64(had)), used, a.rec.Mem)
}

// OrderedProfiles lists the site's profiles from the smallest: least usable
// memory, then least capacity.
func OrderedProfiles(site *catalog.Site) []*catalog.Profile {
	var ps []*catalog.Profile
	for i := range site.Profiles {
		ps = append(ps, &site.Profiles[i])
	}
	slices.SortStableFunc(ps, func(x, y *catalog.Profile) int {
		if c := cmpFloat(x.UsableMemory.MiB(), y.UsableMemory.MiB()); c != 0 {
			return c
		}
		return cmpFloat(site.Capacity(x), site.Capacity(y))
	})
	return ps
}

// probeCommand is the command that measures the script, on one profile or all.
func (a *analysis) probeCommand(profile string) string {
	cmd := "migadvisor recommend --probe"
	if profile != "" {
		cmd += " --profiles " + profile
	}
	script := a.job.Script
	if script == "" {
		script = "JOB.sh"
	}
	return cmd + " " + slurm.ShellWord(script)
}

func joinProfiles(ps []string) string { return strings.Join(ps, ", ") }
