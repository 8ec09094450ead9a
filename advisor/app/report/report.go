// Package report turns the history's runs of a workload into the tables,
// charts and pages a site publishes about its GPU profiles: a CSV in the
// site's own columns, a Markdown page (plain, or MkDocs with markdown-exec),
// an SVG chart of runtime and SU per profile, and takeaways with provenance.
// Publish writes them for the workloads a history has, with an index.
package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// Metrics the reference workloads print (MIGADVISOR_METRIC), read by the
// table layouts. A job of the user's own that prints them gets them in its
// report too.
const (
	MetricTrainingTime = "training_time_s"
	MetricAccuracy     = "test_accuracy_pct"
	MetricReserved     = "peak_reserved_mib"
	MetricTokensPerS   = "tokens_per_s"
	MetricNsPerDay     = "ns_per_day"
	MetricWallS        = "wall_s"
	MetricMPIRanks     = "mpi_ranks"
	MetricOMPThreads   = "omp_threads"
)

// Workload is what a report is about.
type Workload struct {
	Tag         string // the history's workload tag
	Title       string // default: the tag
	Description string
	Table       string // the layout: pytorch, llm, gromacs; "" for the generic one
}

// Report is a workload's runs at a site, by profile.
type Report struct {
	Workload Workload
	Site     *catalog.Site
	Profiles []*ProfileResult // the site's order, smallest first; only profiles with runs
	Skipped  int              // records that say nothing about a profile (running, several GPUs, unknown GPU)
}

// ProfileResult is one profile's runs of the workload. Figures are medians
// over the completed runs, < 0 when unknown.
type ProfileResult struct {
	Profile   *catalog.Profile
	Runs      int // ended runs on the profile
	Completed int
	OOM       bool   // it ran out of memory, and never completed
	Outcome   string // completed, OOM, timeout, failed, cancelled

	Seconds      float64 // the job's wall time
	PeakMiB      float64 // the monitor's peak (the job's processes), else accounting's
	AllocatedMiB float64 // the framework's allocated peak (peak_allocated_mib)
	Work         float64 // as the runs reported it: an amount, or a rate (ns/day)
	WorkUnit     string
	// DoneUnit is the unit of the work done: WorkUnit, or what a rate
	// counts ("ns" of "ns/day"); SecondsPerWork is the median time a unit
	// of it took, as recommend reads the runs (a rate times the run's
	// seconds), < 0 when unknown. SU per ns/day would compare nothing.
	DoneUnit       string
	SecondsPerWork float64
	Metrics        map[string]float64
	CPUs           int
	MemMiB         float64
	Nodes          int
	Rate           float64 // SU per hour at the runs' CPUs and memory (the site's list price)

	JobIDs      []string
	First, Last time.Time           // when the runs ended
	Versions    map[string][]string // software reported by the runs, each value once
}

// Build reads the records of one workload into a report.
func Build(site *catalog.Site, w Workload, recs []history.JobRecord) (*Report, error) {
	if w.Title == "" {
		w.Title = w.Tag
	}
	rep := &Report{Workload: w, Site: site}
	byProfile := map[string][]judged{}
	for i := range recs {
		rec := recs[i] // a copy: the caller's records keep the names the jobs used
		rec.Metrics = CanonicalMetrics(rec.Metrics)
		run, ok := advisor.RunFromRecord(&rec)
		if !ok || run.GPUs > 1 { // the tables are per GPU
			rep.Skipped++
			continue
		}
		byProfile[run.Profile] = append(byProfile[run.Profile], judged{&rec, run})
	}
	for _, p := range site.ProfilesBySize() {
		if rs := byProfile[p.Name]; len(rs) > 0 {
			pr, err := summarise(site, p, rs)
			if err != nil {
				return nil, err
			}
			rep.Profiles = append(rep.Profiles, pr)
		}
	}
	return rep, nil
}

// judged is a record with the advisor's reading of it.
type judged struct {
	rec *history.JobRecord
	run advisor.Run
}

func summarise(site *catalog.Site, p *catalog.Profile, runs []judged) (*ProfileResult, error) {
	pr := &ProfileResult{Profile: p, Runs: len(runs), Metrics: map[string]float64{}, Versions: map[string][]string{}}
	var done, recs []*history.JobRecord
	var doneRuns []advisor.Run
	outcomes := map[string]int{}
	for _, j := range runs {
		r, run := j.rec, j.run
		recs = append(recs, r)
		pr.JobIDs = append(pr.JobIDs, r.JobID)
		if r.End != nil {
			if pr.First.IsZero() || r.End.Before(pr.First) {
				pr.First = *r.End
			}
			if r.End.After(pr.Last) {
				pr.Last = *r.End
			}
		}
		for k, v := range r.Versions {
			// "": the output showed the software but not its version.
			if v != "" && !slices.Contains(pr.Versions[k], v) {
				pr.Versions[k] = append(pr.Versions[k], v)
			}
		}
		switch {
		case run.Completed:
			done, doneRuns = append(done, r), append(doneRuns, run)
			outcomes["completed"]++
		case run.GPUOOM || run.HostOOM:
			outcomes["OOM"]++
		case run.TimedOut:
			outcomes["timeout"]++
		case r.State == "CANCELLED":
			outcomes["cancelled"]++
		default:
			outcomes["failed"]++
		}
	}
	slices.SortFunc(pr.JobIDs, compareJobIDs)
	pr.Completed = len(done)
	pr.OOM = pr.Completed == 0 && outcomes["OOM"] > 0
	pr.Outcome = outcome(outcomes)
	if len(done) == 0 {
		done = recs // the request (CPUs, memory) still prices the profile
	}
	pr.Seconds = median(done, func(r *history.JobRecord) *float64 { return intF(r.ElapsedS) })
	if pr.Completed == 0 {
		// A run that timed out, failed or ran out of memory took no
		// runtime of the job's: its elapsed time in the runtime column (and
		// the chart, and the SU) would read as a measurement. The outcome says why.
		pr.Seconds = -1
	}
	pr.PeakMiB = median(done, func(r *history.JobRecord) *float64 { return r.GPUMemPeakMiB() })
	pr.AllocatedMiB = median(done, metric(slurm.AllocatedMetric))
	pr.Work = median(done, func(r *history.JobRecord) *float64 { return r.Work })
	for _, r := range done {
		if r.WorkUnit != "" {
			pr.WorkUnit = r.WorkUnit
		}
		for k := range r.Metrics {
			if _, ok := pr.Metrics[k]; !ok {
				pr.Metrics[k] = median(done, metric(k))
			}
		}
	}
	pr.DoneUnit, pr.SecondsPerWork = secondsPerWork(doneRuns)
	pr.CPUs = int(math.Max(1, median(done, func(r *history.JobRecord) *float64 { return intF(r.CPUs) })))
	pr.Nodes = int(median(done, func(r *history.JobRecord) *float64 { return intF(r.Nodes) }))
	pr.MemMiB = median(done, func(r *history.JobRecord) *float64 { return r.ReqMemMiB })
	c, err := site.Charge(catalog.Job{Profile: p, GPUs: 1, CPUs: pr.CPUs, MemMiB: math.Max(0, pr.MemMiB), Hours: 1})
	if err != nil {
		return nil, fmt.Errorf("price %s: %w", p.Name, err)
	}
	pr.Rate = c.SUPerHour
	return pr, nil
}

// secondsPerWork is the unit of work the completed runs did and the
// median seconds a unit took, as recommend reads them (advisor.RunFromRecord
// turns a rate into the work done); -1 where none reported work.
func secondsPerWork(runs []advisor.Run) (string, float64) {
	var unit string
	var perWork []float64
	for _, r := range runs {
		if r.Work <= 0 || r.Seconds <= 0 || unit != "" && r.WorkUnit != unit {
			continue
		}
		unit, perWork = r.WorkUnit, append(perWork, r.Seconds/r.Work)
	}
	if len(perWork) == 0 {
		return "", -1
	}
	return unit, medianOf(perWork)
}

// outcome names what the runs did, the best first: completed if any did.
func outcome(n map[string]int) string {
	for _, o := range []string{"completed", "OOM", "timeout", "cancelled", "failed"} {
		if n[o] > 0 {
			return o
		}
	}
	return "failed"
}

// Metric is a median MIGADVISOR_METRIC of the completed runs, < 0 if none.
func (pr *ProfileResult) Metric(name string) float64 {
	if v, ok := pr.Metrics[name]; ok {
		return v
	}
	return -1
}

// TrainingSeconds is the work's own time when the job reported it, else the
// job's wall time.
func (pr *ProfileResult) TrainingSeconds() float64 {
	if v := pr.Metric(MetricTrainingTime); v > 0 {
		return v
	}
	return pr.Seconds
}

// SU is what one run costs at the profile's rate over the job's wall time.
func (pr *ProfileResult) SU() float64 {
	if pr.Seconds < 0 {
		return -1
	}
	return pr.Rate * pr.Seconds / 3600
}

// SUPerWork is SU per unit of work done (DoneUnit), as recommend prices
// it: the rate over the median time a unit took; < 0 when unknown.
func (pr *ProfileResult) SUPerWork() float64 {
	if pr.SecondsPerWork <= 0 || pr.Seconds < 0 {
		return -1
	}
	return pr.Rate * pr.SecondsPerWork / 3600
}

// IsRate reports whether the runs reported their work as a rate (ns/day,
// samples/s), not an amount.
func (pr *ProfileResult) IsRate() bool {
	return pr.WorkUnit != "" && pr.DoneUnit != "" && pr.DoneUnit != pr.WorkUnit
}

// Full is the whole-GPU result, if the workload ran on one.
func (rep *Report) Full() (*ProfileResult, bool) {
	for _, pr := range rep.Profiles {
		if !pr.Profile.IsMIG() {
			return pr, true
		}
	}
	return nil, false
}

// Versions are the software the runs reported, "name version" each, sorted.
func (rep *Report) Versions() []string {
	all := map[string][]string{}
	for _, pr := range rep.Profiles {
		for k, vs := range pr.Versions {
			for _, v := range vs {
				if !slices.Contains(all[k], v) {
					all[k] = append(all[k], v)
				}
			}
		}
	}
	var out []string
	for k, vs := range all {
		sort.Strings(vs)
		out = append(out, k+" "+strings.Join(vs, " / "))
	}
	sort.Strings(out)
	return out
}

// OtherDevices are the devices the runs reported (MIGADVISOR_VERSION
// device) that are not the site's GPU model: "cpu" where a dev cluster's
// GPUs were fake, another GPU where the workload ran elsewhere. A page must
// not say the figures are the site's GPU's then.
func (rep *Report) OtherDevices() []string {
	site, known := catalog.LookupModel(rep.Site.GPUModel)
	var out []string
	for _, pr := range rep.Profiles {
		for _, d := range pr.Versions["device"] {
			m, ok := catalog.LookupModel(d)
			if (!known || !ok || m.Name != site.Name) && !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	sort.Strings(out)
	return out
}

func median(recs []*history.JobRecord, f func(*history.JobRecord) *float64) float64 {
	var vs []float64
	for _, r := range recs {
		if v := f(r); v != nil && *v >= 0 {
			vs = append(vs, *v)
		}
	}
	if len(vs) == 0 {
		return -1
	}
	return medianOf(vs)
}

// medianOf is the median of figures, at least one.
func medianOf(vs []float64) float64 {
	slices.Sort(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

func metric(name string) func(*history.JobRecord) *float64 {
	return func(r *history.JobRecord) *float64 {
		if v, ok := r.Metrics[name]; ok {
			return &v
		}
		return nil
	}
}

func intF(p *int64) *float64 {
	if p == nil {
		return nil
	}
	f := float64(*p)
	return &f
}

// compareJobIDs orders "9" before "10", and array tasks after their job.
func compareJobIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
