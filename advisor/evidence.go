package advisor

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// Run is one run of a job, as the advisor weighs it. Figures not known are < 0.
type Run struct {
	Cluster   string
	JobID     string
	Profile   string
	State     string
	Seconds   float64 // wall time
	Completed bool    // COMPLETED, with no GPU OOM in its output
	TimedOut  bool    // ended at its time limit: Seconds is a lower bound
	GPUOOM    bool
	HostOOM   bool // killed for host memory (OUT_OF_MEMORY, oom-kill)
	ExitCode  int64

	NeedMiB      float64 // lower bound from a GPU OOM message
	PeakMiB      float64 // peak GPU memory (the monitor's, else jobstats', else gres/gpumem)
	PeakSource   string  // where PeakMiB comes from: history.PeakMonitor, PeakJobstats or PeakSacct
	AllocatedMiB float64 // the framework's allocated peak (slurm.AllocatedMetric)
	// Software is what the run's output showed it ran that holds GPU memory
	// its own way (slurm.Software* names, sorted): a caching or
	// preallocating framework's peak is no need (advisor/base/memory).
	Software []string
	// Settings are what the run ran with that changes how a framework
	// holds memory (MIGADVISOR_SETTING: a probe's --no-prealloc).
	Settings       map[string]string
	Work           float64 // work done, in WorkUnit
	WorkUnit       string
	Utilization    float64 // mean GPU utilization, %
	MemUtilization float64 // mean memory (DRAM) utilization, %; -1 unknown

	// Earlier marks a run of an earlier version of the script (the same
	// path, or the same job name and resources, with another fingerprint):
	// evidence, but weaker than the exact script's. EarlierBy says which
	// (history.EarlierByPath, history.EarlierByName).
	Earlier   bool
	EarlierBy string

	CPUs       int
	ReqMemMiB  float64
	MaxRSSMiB  float64
	QueueWaitS float64 // Start − Submit
	Submitted  time.Time
	Outcome    outcome.Outcome // how it ended, in words (Explain)
	GPUs       int             // GPUs of the profile the run had; 0 (a reference row) counts as 1
	User       string          // who ran it ("" when unknown)
	// Swept marks a variant of a sweep or a probe: a measurement, not how
	// often the user runs the script.
	Swept bool
	// Emulated is the GPU an emulated run ran on (emulated.go); "" for a
	// run on the profile itself. EmulatedWhole: the emulation's run on the
	// whole GPU, with no limits.
	Emulated      string
	EmulatedWhole bool
	// RanAt is the share of the GPU's SMs and bandwidth an emulated run
	// was measured to have; nil: its profile's (emulated.go).
	RanAt *catalog.Shares
}

// RunFromRecord reads a job record of the history. It returns false for a
// record that says nothing about a profile: not ended, no GPU of a known
// profile. A run on several GPUs says how many (GPUs): its figures are for
// a job of that many.
func RunFromRecord(r *history.JobRecord) (Run, bool) {
	if r.Stub || !slurm.TerminalState(r.State) || r.Profile == "" || r.GPUCount < 1 {
		return Run{}, false
	}
	run := Run{Cluster: r.Cluster, JobID: r.JobID, Profile: r.Profile, State: r.State, Seconds: -1, NeedMiB: -1, PeakMiB: -1,
		AllocatedMiB: -1, Work: -1, Utilization: -1, MemUtilization: -1, ReqMemMiB: -1, MaxRSSMiB: -1, QueueWaitS: -1}
	run.Earlier, run.EarlierBy = r.Earlier, r.EarlierBy
	run.GPUs, run.User = int(r.GPUCount), r.User
	run.Swept = r.SweepDir != ""
	run.GPUOOM = r.GPUOOM != ""
	run.HostOOM = r.OOM() == slurm.OOMHost
	run.Completed = r.State == "COMPLETED" && !run.GPUOOM
	run.TimedOut = r.ReachedTimeLimit()
	run.Seconds = deref(intToFloat(r.ElapsedS), -1)
	if r.ExitCode != nil {
		run.ExitCode = *r.ExitCode
	}
	run.NeedMiB = deref(r.GPUNeedMiB, -1)
	run.PeakMiB, run.PeakSource = deref(r.GPUMemPeakMiB(), -1), r.GPUMemSource()
	run.Software, run.Settings = memory.SoftwareOfRecord(r.Versions, r.GPUOOM), r.Settings
	if v, ok := r.Metrics[slurm.AllocatedMetric]; ok && v > 0 {
		run.AllocatedMiB = v
	}
	if r.Work != nil && *r.Work > 0 {
		run.Work, run.WorkUnit = workDone(*r.Work, r.WorkUnit, run.Seconds)
	}
	if u := r.GPUUtilizationPct(); u != nil {
		// No GPU is busy more than all of the time: a figure above 100%
		// (a summary's rounding, overlapping samples) is a GPU always busy.
		run.Utilization = min(*u, 100)
	}
	if u := r.GPUMemUtilizationPct(); u != nil {
		run.MemUtilization = *u
	}
	if r.CPUs != nil {
		run.CPUs = int(*r.CPUs)
	}
	run.ReqMemMiB, run.MaxRSSMiB = deref(r.ReqMemMiB, -1), deref(r.MaxRSSMiB, -1)
	if r.Submit != nil {
		run.Submitted = *r.Submit
	}
	run.Outcome = outcome.Of(r, nil)
	if r.Submit != nil && r.Start != nil && !r.Start.Before(*r.Submit) {
		run.QueueWaitS = r.Start.Sub(*r.Submit).Seconds()
	}
	return run, true
}

// RunsFromBenchmark turns a reference table into runs: one per row.
func RunsFromBenchmark(b *catalog.Benchmark) []Run {
	var runs []Run
	for _, row := range b.Rows {
		r := Run{JobID: b.Name + "/" + row.Profile, Profile: row.Profile, State: "COMPLETED", Seconds: row.Seconds,
			Completed: !row.OOM, GPUOOM: row.OOM, NeedMiB: -1, PeakMiB: row.PeakMiB, AllocatedMiB: row.AllocatedMiB,
			Work: row.Work, WorkUnit: b.WorkUnit, Utilization: -1, MemUtilization: -1, CPUs: b.CPUs, ReqMemMiB: b.Memory.MiB(),
			MaxRSSMiB: -1, QueueWaitS: -1}
		if row.OOM {
			r.State = "FAILED"
		}
		if r.Work < 0 {
			r.WorkUnit = ""
		}
		runs = append(runs, r)
	}
	return runs
}

// ptr is a pointer to a copy of v, for the figures JSON leaves null when unknown.
func ptr[T any](v T) *T { return &v }

func deref(p *float64, none float64) float64 {
	if p == nil {
		return none
	}
	return *p
}

func intToFloat(p *int64) *float64 {
	if p == nil {
		return nil
	}
	f := float64(*p)
	return &f
}

// memoryRuns are the runs as the OOM-risk rules read them, each with what
// held its memory and the memory of the site's whole GPU.
func memoryRuns(site *catalog.Site, runs []Run, holder func(Run) memory.Holder) []memory.Run {
	var out []memory.Run
	device := deviceMiB(site)
	for _, r := range runs {
		p, ok := site.Profile(r.Profile)
		if !ok {
			continue
		}
		out = append(out, memory.Run{Profile: r.Profile, UsableMiB: p.UsableMemory.MiB(), Completed: r.Completed,
			GPUOOM: r.GPUOOM, NeedMiB: r.NeedMiB, PeakMiB: r.PeakMiB, AllocatedMiB: r.AllocatedMiB, Earlier: r.Earlier,
			Emulated: r.Emulated != "", PeakSource: r.PeakSource, Holder: holder(r), DeviceMiB: device})
	}
	return out
}

// deviceMiB is the usable memory of the site's whole GPU: its largest
// profile of one GPU without MIG, else its GPU model's; 0 unknown.
func deviceMiB(site *catalog.Site) float64 {
	var mib float64
	for i := range site.Profiles {
		if p := &site.Profiles[i]; !p.IsMIG() && p.GPUCount <= 1 {
			mib = max(mib, p.UsableMemory.MiB())
		}
	}
	if m, ok := site.Model(); ok && mib == 0 {
		mib = m.UsableMemory.MiB()
	}
	return mib
}

// medianOf is the median of the values f gives for the runs where keep holds.
func medianOf(runs []Run, keep func(Run) bool, f func(Run) float64) (float64, []float64, bool) {
	var vs []float64
	for _, r := range runs {
		if keep(r) {
			if v := f(r); v > 0 {
				vs = append(vs, v)
			}
		}
	}
	if len(vs) == 0 {
		return 0, nil, false
	}
	slices.Sort(vs)
	return runmodel.Median(vs), vs, true
}

// briefOutcome says in a few words how a run that did not complete ended,
// and where: "ran out of GPU memory on 1g.10gb".
func (r Run) briefOutcome() string {
	switch {
	case r.GPUOOM:
		return "ran out of GPU memory on " + r.Profile
	case r.HostOOM:
		return "ran out of host memory on " + r.Profile
	case r.TimedOut:
		return "reached its time limit on " + r.Profile
	}
	return "on " + r.Profile + " " + r.outcomeText()
}

// outcomeText says how the run ended, to follow "job 42 ": Explain's
// sentence when the run came from the history, else from its flags.
func (r Run) outcomeText() string {
	switch {
	case r.Outcome.Text != "":
		return r.Outcome.Text
	case r.GPUOOM:
		return "ran out of GPU memory"
	case r.HostOOM:
		return "ran out of host memory"
	case r.TimedOut:
		return "reached its time limit"
	case r.Completed:
		return "completed"
	}
	return "ended " + r.State
}

// RecordCharge prices a job of the history with the site's formula: what it
// was allocated (CPUs, requested memory, GPU profile), for as long as it
// ran. ok is false where no honest figure can be given: no elapsed time or
// CPUs in its record, or a GPU the site has no profile for.
func RecordCharge(site *catalog.Site, r *history.JobRecord) (ch catalog.Charge, ok bool) {
	if r.ElapsedS == nil || r.CPUs == nil || r.GPUCount > 0 && r.Profile == "" {
		return catalog.Charge{}, false
	}
	u := catalog.Usage{CPUs: int(*r.CPUs), Hours: float64(*r.ElapsedS) / 3600, QoS: r.QOS, Partition: r.Partition}
	if r.ReqMemMiB != nil {
		u.MemMiB = *r.ReqMemMiB
	}
	if r.GPUCount > 0 {
		u.Profile, u.GPUs = r.Profile, int(r.GPUCount)
	}
	job, err := site.JobOf(u)
	if err != nil {
		return catalog.Charge{}, false
	}
	ch, err = site.Charge(job)
	return ch, err == nil
}

// ratePeriods are the periods a rate's unit may be per: GROMACS prints
// ns/day, Hugging Face's Trainer samples/s.
var ratePeriods = map[string]float64{"s": 1, "sec": 1, "second": 1, "min": 60, "minute": 60, "h": 3600, "hour": 3600, "day": 86400}

// workDone is the work a run did: a figure in a unit of work as it is, a
// rate (its output's ns/day, samples/s) times the run's seconds, in the
// unit of work the rate counts. A rate is no amount of work: "SU per
// ns/day" compares nothing, and a job run longer does more of it.
func workDone(work float64, unit string, seconds float64) (float64, string) {
	what, per, ok := strings.Cut(unit, "/")
	period, isRate := ratePeriods[strings.TrimSpace(per)]
	if !ok || !isRate || strings.TrimSpace(what) == "" {
		return work, unit
	}
	if seconds <= 0 {
		return 0, "" // a rate and no time: no amount known
	}
	return work * seconds / period, strings.TrimSpace(what)
}

// ran reports whether a run says something about the job: it completed,
// failed or reached a limit (a job cancelled before it started does not).
func ran(r Run) bool { return r.Ran() }

// Ran reports whether the run says something about the job: it completed,
// failed or reached a limit (a job cancelled before it started does not).
func (r Run) Ran() bool {
	return r.Completed || r.GPUOOM || r.HostOOM || r.TimedOut || r.State == "FAILED"
}

// failureNote is the note that explains a failed run.
func failureNote(r Run) string {
	return fmt.Sprintf("job %s on %s %s", r.JobID, r.Profile, r.outcomeText())
}
