package advisor

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// Emulated runs come from an emulation job ('migadvisor emulate'): one
// whole GPU that ran the job once per profile under CUDA MPS limits, the
// profile's share of the SMs and its memory as a cap. They say whether the
// job fits a profile as well as a real slice would (the cap is enforced by a
// CUDA out-of-memory error); their times are those of the GPU that ran
// them, and MPS leaves it its whole memory bandwidth, so a job bound by
// bandwidth runs faster there than on the real slice. A profile with runs
// of its own is judged by them alone: measured evidence wins.

// RunsFromRecord are the runs a job record holds: its own, or, for an
// emulation job, one per profile it ran (the whole GPU's with no limits).
// An emulation that could not use MPS ran the job once as it is: that run
// is the job's own, with the evidence of its output.
func RunsFromRecord(r *history.JobRecord) []Run {
	var runs []Run
	for _, e := range r.Emulated {
		switch e.Profile {
		case slurm.PlainProfile:
			if own, ok := RunFromRecord(r); ok && e.Outcome != slurm.EmulatedCancelled {
				plain := runFromEmulated(r, e)
				plain.JobID, plain.Profile, plain.Emulated, plain.Swept = own.JobID, own.Profile, "", own.Swept
				plain.GPUs, plain.QueueWaitS, plain.Submitted, plain.MaxRSSMiB = own.GPUs, own.QueueWaitS, own.Submitted, own.MaxRSSMiB
				return []Run{plain}
			}
		default:
			if e.Outcome != slurm.EmulatedCancelled { // cut short by the job's end: no result
				runs = append(runs, runFromEmulated(r, e))
			}
		}
	}
	if len(r.Emulated) > 0 {
		return runs
	}
	if run, ok := RunFromRecord(r); ok {
		return []Run{run}
	}
	return nil
}

func runFromEmulated(r *history.JobRecord, e history.EmulatedRun) Run {
	ev := e.Evidence
	run := Run{Cluster: r.Cluster, JobID: r.JobID + "/" + e.Profile, Profile: e.Profile, Seconds: e.Seconds, NeedMiB: -1,
		PeakMiB: -1, AllocatedMiB: -1, Work: -1, Utilization: -1, MemUtilization: -1, ReqMemMiB: deref(r.ReqMemMiB, -1),
		MaxRSSMiB: -1, QueueWaitS: -1, GPUs: 1, User: r.User, Earlier: r.Earlier, EarlierBy: r.EarlierBy, Swept: true,
		Emulated: cmp.Or(e.GPU, "a whole GPU"), EmulatedWhole: e.Percentage >= 100 && e.MemLimit == ""}
	if r.CPUs != nil {
		run.CPUs = int(*r.CPUs)
	}
	if e.SMShare > 0 && e.BandwidthShare > 0 && !run.EmulatedWhole {
		run.RanAt = &catalog.Shares{SM: e.SMShare, Bandwidth: e.BandwidthShare}
	}
	run.GPUOOM, run.HostOOM, run.TimedOut = ev.GPUOOM != nil, ev.HostOOM != nil, e.Outcome == slurm.EmulatedBudget
	run.Completed = e.Outcome == slurm.EmulatedCompleted && !run.GPUOOM
	if run.GPUOOM && ev.GPUOOM.NeedMiB > 0 {
		run.NeedMiB = ev.GPUOOM.NeedMiB
	}
	if ev.GPUPeakMiB > 0 {
		run.PeakMiB = ev.GPUPeakMiB
	}
	if v, ok := ev.Metrics[slurm.AllocatedMetric]; ok && v > 0 {
		run.AllocatedMiB = v
	}
	oomSource := ""
	if ev.GPUOOM != nil {
		oomSource = ev.GPUOOM.Source
	}
	run.Software, run.Settings = memory.SoftwareOfRecord(ev.Versions, oomSource), ev.Settings
	if ev.Work > 0 {
		run.Work, run.WorkUnit = ev.Work, ev.WorkUnit
	}
	if ev.GPUUtil == "supported" && ev.GPUUtilMean >= 0 {
		run.Utilization = ev.GPUUtilMean
		if ev.GPUMemUtilMean >= 0 {
			run.MemUtilization = ev.GPUMemUtilMean
		}
	}
	run.State, run.Outcome = emulatedOutcome(run, e)
	return run
}

func emulatedOutcome(run Run, e history.EmulatedRun) (string, outcome.Outcome) {
	on := fmt.Sprintf("on %s emulated on %s", e.Profile, run.Emulated)
	switch {
	case run.GPUOOM:
		return "FAILED", outcome.Outcome{Kind: outcome.GPUOOM, Text: "ran out of GPU memory " + on}
	case run.HostOOM:
		return "OUT_OF_MEMORY", outcome.Outcome{Kind: outcome.HostOOM, Text: "ran out of host memory " + on, AnyProfile: true}
	case run.TimedOut:
		return "TIMEOUT", outcome.Outcome{Kind: outcome.TimeLimit, Text: fmt.Sprintf("reached the emulation's budget after %.0f s %s", e.Seconds, on)}
	case run.Completed:
		return "COMPLETED", outcome.Outcome{Kind: outcome.Completed}
	}
	return "FAILED", outcome.Outcome{Kind: outcome.Failed, Text: fmt.Sprintf("failed (exit %d) %s", e.ExitStatus, on)}
}

// measuredWins drops the emulated runs of every profile that has runs of
// its own, and the times of emulated runs on another GPU than the site's
// (their fit and memory still count).
func measuredWins(site *catalog.Site, runs []Run) []Run {
	out := slices.Clone(runs)
	for i := range out {
		// The whole GPU's run of an emulation on the site's own GPU is a
		// measurement: it ran with no limits, on the hardware it asks for.
		if out[i].EmulatedWhole && sameGPU(site, out[i].Emulated) {
			out[i].Emulated = ""
		}
	}
	measured := map[string]bool{}
	for _, r := range out {
		// Only a run that says how the job went counts: one cancelled
		// before it started, or lost with its node, does not.
		if r.Emulated == "" && (r.Completed || r.GPUOOM || r.HostOOM || r.TimedOut) {
			measured[r.Profile] = true
		}
	}
	out = slices.DeleteFunc(out, func(r Run) bool { return r.Emulated != "" && measured[r.Profile] })
	for i := range out {
		if out[i].Emulated != "" && !sameGPU(site, out[i].Emulated) {
			out[i].Seconds, out[i].Work, out[i].WorkUnit = -1, -1, ""
		}
	}
	return out
}

// ranAt is where the runs of profile p that keep holds ran: the median of
// their measured shares when every one was measured (emulated slices), else
// the profile's own shares.
func ranAt(site *catalog.Site, p *catalog.Profile, runs []Run, keep func(Run) bool) catalog.Shares {
	var sm, bw []float64
	for _, r := range runs {
		if r.Profile != p.Name || !keep(r) {
			continue
		}
		if r.RanAt == nil {
			return site.Shares(p)
		}
		sm, bw = append(sm, r.RanAt.SM), append(bw, r.RanAt.Bandwidth)
	}
	if len(sm) == 0 {
		return site.Shares(p)
	}
	slices.Sort(sm)
	slices.Sort(bw)
	return catalog.Shares{SM: runmodel.Median(sm), Bandwidth: runmodel.Median(bw)}
}

// shifted reports whether runs of the profile ran at other shares than the
// profile's (an emulated slice with the whole GPU's memory system, or a
// higher clock): their times are not the profile's, and it is predicted
// from where they ran.
func shifted(site *catalog.Site, profile string, runs []Run) bool {
	p, ok := site.Profile(profile)
	if !ok {
		return false
	}
	own := site.Shares(p)
	off := func(got, want float64) bool { return math.Abs(math.Log(got/want)) > runmodel.RunNoise }
	for _, r := range runs {
		if r.Profile == profile && r.RanAt != nil && (off(r.RanAt.SM, own.SM) || off(r.RanAt.Bandwidth, own.Bandwidth)) {
			return true
		}
	}
	return false
}

// elsewherePoints are the median times per profile of the completed
// emulated runs on another GPU than the site's, at the shares each ran at
// (where measured; else the profile's own): how the job scales, not how
// long it takes here.
func elsewherePoints(site *catalog.Site, runs []Run) []runmodel.Point {
	elsewhere := func(r Run) bool {
		return r.Emulated != "" && !sameGPU(site, r.Emulated) && r.Completed && r.Seconds > 0
	}
	var points []runmodel.Point
	for _, p := range site.Profiles {
		onP := func(r Run) bool { return r.Profile == p.Name && elsewhere(r) }
		if m, _, ok := medianOf(runs, onP, func(r Run) float64 { return r.Seconds }); ok {
			at := ranAt(site, &p, runs, onP)
			if i := slices.IndexFunc(runs, onP); i >= 0 {
				at, _ = runmodel.OnSiteGPU(site, runs[i].Emulated, at)
			}
			points = append(points, runmodel.Point{Profile: p.Name, Shares: at, Seconds: m, Busy: busyOf(runs, onP, func(r Run) float64 { return r.Seconds }), Emulated: true})
		}
	}
	return points
}

// busyOf is the median time the GPU was busy in the runs keep holds, in
// the units of time (the runs' mean GPU utilization times it); 0 unless
// every one of them reports its utilization (a whole GPU's monitor does, a
// MIG slice's does not).
func busyOf(runs []Run, keep func(Run) bool, time func(Run) float64) float64 {
	var busy []float64
	for _, r := range runs {
		if !keep(r) || time(r) <= 0 {
			continue
		}
		if r.Utilization <= 0 || r.Utilization > 100 {
			return 0
		}
		busy = append(busy, r.Utilization/100*time(r))
	}
	if len(busy) == 0 {
		return 0
	}
	slices.Sort(busy)
	return runmodel.Median(busy)
}

// shapeFromElsewhere is the explanation an emulation on another GPU gives
// the job's times, for a job measured here on one profile only (its own
// points cannot tell how it scales): the emulation's times are not the
// site's, but the share of its time that scales with a resource carries
// over. False when there is none to use.
func shapeFromElsewhere(runs []Run, refs runmodel.References, points, elsewhere []runmodel.Point) (runmodel.Scaling, bool) {
	if runmodel.Distinct(points) != 1 || runmodel.Distinct(elsewhere) < 2 {
		return runmodel.Scaling{}, false
	}
	emulated, ok := emulatedElsewhere(runs)
	if !ok {
		return runmodel.Scaling{}, false
	}
	fit, ok := explain(runs, refs, elsewhere)
	if !ok {
		return runmodel.Scaling{}, false
	}
	fit.Why = fmt.Sprintf("%s, as the job's emulation on %s scaled (%s), from its time measured on %s", fit.Bound(),
		emulated.Emulated, profileList(elsewhere), points[0].Profile)
	if fit.BusyWhy() != "" {
		fit.Why += "; " + fit.BusyWhy()
	}
	fit.Source = "the emulation's scaling, " + fit.Source
	return fit, true
}

func profileList(points []runmodel.Point) string {
	var names []string
	for _, p := range points {
		names = append(names, p.Profile)
	}
	return textutil.JoinAnd(names)
}

// explain chooses the explanation of the job's times at points. Where
// emulated slices ran at shares of their own (their bandwidth grows with
// their SMs and levels off, unlike a real slice's), the shares cannot tell
// a fixed part on the SMs from a bound on bandwidth: the emulated runs'
// memory utilization chooses the resource, when it says. Emulated times
// are explained by the GPU's busy time where every profile reports it
// (runmodel.ExplainWithBusy).
func explain(runs []Run, refs runmodel.References, points []runmodel.Point) (runmodel.Scaling, bool) {
	var util, mem float64
	emulated, shifted := false, false
	for _, r := range runs {
		if !r.Completed || !slices.ContainsFunc(points, func(p runmodel.Point) bool { return p.Profile == r.Profile }) {
			continue
		}
		emulated = emulated || r.Emulated != "" || r.RanAt != nil
		if r.RanAt == nil {
			continue
		}
		shifted = true
		if r.Utilization > 0 && r.MemUtilization >= 0 {
			util, mem = util+r.Utilization, mem+r.MemUtilization
		}
	}
	resource := catalog.Mixed
	if shifted && util > 0 {
		resource = runmodel.BoundBy(util, mem)
	}
	if emulated {
		return runmodel.ExplainEmulated(resource, points, refs)
	}
	return runmodel.ExplainTimes(points, refs)
}

// sameGPU reports whether a device name is the site's GPU model.
func sameGPU(site *catalog.Site, device string) bool {
	m, ok := site.Model()
	if !ok {
		return false
	}
	d, ok := catalog.LookupModel(strings.TrimSpace(device))
	return ok && d.Name == m.Name
}

// emulatedNote says which profiles' evidence is emulated, and what that
// leaves out.
func emulatedNote(site *catalog.Site, runs []Run) string {
	var profiles []string
	device := ""
	for _, r := range runs {
		if r.Emulated != "" && !slices.Contains(profiles, r.Profile) {
			profiles, device = append(profiles, r.Profile), r.Emulated
		}
	}
	if len(profiles) == 0 {
		return ""
	}
	note := fmt.Sprintf("%s emulated on %s (CUDA MPS: the profile's SMs and memory, not its memory bandwidth)",
		textutil.JoinAnd(profiles), device)
	switch measured := measuredShares(site, runs); {
	case !sameGPU(site, device):
		note += fmt.Sprintf("; their times are that GPU's, not the %s's: they say how the job scales, from a time measured here", siteGPU(site))
	case measured != "":
		note += "; measured there at " + measured + ", so their times are scaled to the slices' shares by the runtime model"
	}
	return note
}

// measuredShares says, per emulated profile that was measured, the shares
// it ran at beside the slice's: "1g.10gb 15% of the SMs and 38% of the
// bandwidth (the slice: 12% and 12%)".
func measuredShares(site *catalog.Site, runs []Run) string {
	var parts []string
	seen := map[string]bool{}
	for _, r := range runs {
		p, ok := site.Profile(r.Profile)
		if r.Emulated == "" || r.RanAt == nil || seen[r.Profile] || !ok {
			continue
		}
		seen[r.Profile] = true
		own := site.Shares(p)
		parts = append(parts, fmt.Sprintf("%s %.0f%% of the SMs and %.0f%% of the bandwidth (the slice: %.0f%% and %.0f%%)",
			r.Profile, 100*r.RanAt.SM, 100*r.RanAt.Bandwidth, 100*own.SM, 100*own.Bandwidth))
	}
	return textutil.JoinAnd(parts)
}

func siteGPU(site *catalog.Site) string {
	if m, ok := site.Model(); ok {
		return m.Name
	}
	return site.Name + " GPU"
}

// emulatedElsewhere is a completed run emulated on another GPU than the
// site's, whose time does not count here.
func emulatedElsewhere(runs []Run) (Run, bool) {
	for _, r := range runs {
		if r.Completed && r.Emulated != "" && r.Seconds < 0 {
			return r, true
		}
	}
	return Run{}, false
}
