package memory

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/internal/textutil"
)

// Levels of the risk that a job runs out of GPU memory on a profile.
const (
	RiskLow     = "low"
	RiskMedium  = "medium"
	RiskHigh    = "high"
	RiskUnknown = "unknown" // no memory evidence: never read as low
	RiskNone    = "n/a"     // the profile cannot run the job (a MIG slice for a multi-GPU job)
)

// DefaultLowRiskShare is the share of a profile's usable memory below which
// a known need is a low risk; up to HighRiskShare it is medium. What it
// leaves free is the one margin a measured figure gets: for what a peak
// misses, a spike between the samples of jobstats or gres/gpumem (every 30
// s or so) as much as the next run's other input or the allocator's
// fragments. A figure is compared as it was seen, with no margin of its
// own on top (a sampled peak ×1.2 under 80% kept a solver that peaked at
// 30.5 GiB off a 39.5 GiB slice: it asked for 1.5 times its peak).
const (
	DefaultLowRiskShare = 0.80
	HighRiskShare       = 0.95
)

// unknownMiB marks a figure no run gave.
const unknownMiB = -1

// Run is what one run of a job says about its GPU memory.
type Run struct {
	Profile   string
	UsableMiB float64 // the profile's usable memory
	Completed bool    // ended COMPLETED, without a GPU OOM
	GPUOOM    bool
	NeedMiB   float64 // lower bound from the OOM message; < 0 if none
	PeakMiB   float64 // measured peak (the monitor's, else jobstats', else gres/gpumem); < 0 if none
	// PeakSource is what measured PeakMiB (history.PeakMonitor,
	// PeakJobstats, PeakSacct; "": a published table's). jobstats and
	// sacct sample the GPU every 30 s or so and may miss a spike between
	// samples (sampledPeaks).
	PeakSource string
	Emulated   bool // under MPS limits on a whole GPU (advisor's emulated.go)
	// AllocatedMiB is the framework's own peak of allocated memory (e.g.
	// MIGADVISOR_METRIC peak_allocated_mib): unlike a peak seen by NVML it is
	// not inflated by a caching allocator that grows into a bigger slice.
	AllocatedMiB float64 // < 0 if none
	// Earlier: the run is of an earlier version of the script. Its figures
	// count with EarlierMargin more, and its completion is no proof.
	Earlier bool
	// Holder is what held the job's memory: with a caching or preallocating
	// framework the peak is a ceiling of the need, not the need.
	Holder Holder
	// DeviceMiB is the usable memory of the whole GPU the profile is on (a
	// slice's GPU's); 0 unknown. A ceiling above it bounds nothing.
	DeviceMiB float64
}

// EarlierMargin widens the memory figures of an earlier version of a script:
// an edit (a bigger batch, another model) may need more. It protects
// against the change of the script, not the measure of it, which the share
// kept free (DefaultLowRiskShare) does.
const EarlierMargin = 1.25

// figure is a run's memory figure as the need reads it: with the margin of
// an earlier version, and its words.
func (r Run) figure(v float64, what string) (float64, string) {
	if !r.Earlier {
		return v, what + " on " + r.Profile
	}
	return v * EarlierMargin, fmt.Sprintf("%s of an earlier version on %s", what, r.Profile)
}

// Need is the estimate of a job's GPU memory need, with where it came from.
type Need struct {
	MiB    float64 // < 0: unknown
	Runs   int     // runs whose figures went into it
	Source string

	// The figure that decided it: its kind, the profile it was seen on, how
	// many runs there gave a figure of that kind, the figure as seen (MiB is
	// that with EarlierMargin for an earlier version), and whether the run
	// was of an earlier version.
	Kind      string // NeedAllocated, NeedPeak or NeedOOM
	By        string // what measured it: MeasuredBy*
	Profile   string
	OnProfile int
	SeenMiB   float64
	Earlier   bool

	// Ceiling is the least memory a job was seen to hold whose peaks are
	// no need (a caching or preallocating framework's, or peaks that grew
	// with the device): the need is at most that. Its Kind is NeedCeiling;
	// MiB < 0: none.
	Ceiling *Need
	// Holder is what held the memory, and why that is known.
	Holder Holder
}

// What measured a need's deciding figure: a peak's source, or one of these.
const (
	MeasuredByMonitor   = history.PeakMonitor  // migadvisor's NVML monitor in the job
	MeasuredByJobstats  = history.PeakJobstats // the site's jobstats summary
	MeasuredBySacct     = history.PeakSacct    // Slurm's gres/gpumem accounting
	MeasuredByFramework = "framework"          // the job's own report of its allocated peak
	MeasuredByOOM       = "OOM message"        // the lower bound an out-of-memory message gives
)

// sampledPeaks are the sources of a peak sampled every 30 s or so, in the
// words a need's source uses: such a peak may have missed a spike between
// samples (an evaluation pass, a checkpoint gathered on the GPU), which the
// share of a profile kept free covers, as it covers the rest a peak misses.
// The in-job monitor samples every half second.
var sampledPeaks = map[string]string{history.PeakJobstats: "jobstats", history.PeakSacct: "sacct's gres/gpumem"}

// peakWords says what measured a peak: "peak", "peak jobstats sampled".
func peakWords(r Run) string {
	if by, sampled := sampledPeaks[r.PeakSource]; sampled {
		return "peak " + by + " sampled"
	}
	return "peak"
}

// Kinds of memory figure.
const (
	NeedAllocated = "allocated" // the framework's allocated peak
	NeedPeak      = "peak"      // the peak NVML saw
	NeedOOM       = "oom"       // the lower bound an out-of-memory message gives
	NeedCeiling   = "ceiling"   // a peak of memory held beyond the need: an upper bound
)

// Known reports whether any run gave a figure.
func (n Need) Known() bool { return n.MiB >= 0 }

// NeedJSON is the estimated GPU memory need as a recommendation's JSON
// gives it.
type NeedJSON struct {
	MiB       float64 `json:"mib"`
	Runs      int     `json:"runs"`
	Source    string  `json:"source"`
	Kind      string  `json:"kind"`        // allocated, peak, oom or ceiling
	By        string  `json:"measured_by"` // monitor, jobstats, sacct, framework or OOM message
	Profile   string  `json:"profile"`     // where the deciding figure was seen
	OnProfile int     `json:"runs_on_profile"`
	SeenMiB   float64 `json:"seen_mib"` // the figure itself; mib adds the margin of an earlier version
	Earlier   bool    `json:"earlier_version"`
}

// JSON is the need as a recommendation's JSON gives it, in whole MiB.
func (n Need) JSON() *NeedJSON {
	return &NeedJSON{MiB: math.Round(n.MiB), Runs: n.Runs, Source: n.Source, Kind: n.Kind, By: n.By, Profile: n.Profile,
		OnProfile: n.OnProfile, SeenMiB: math.Round(n.SeenMiB), Earlier: n.Earlier}
}

// EstimateNeed combines the runs' figures. Allocated peaks are preferred
// over NVML peaks; an NVML peak is taken from the smallest profile that has
// one, where caching inflated it least (Wulver's LLM run reserved 8.97 GB on
// a 10gb slice but 23.55 GB on 40gb for the same 5.68 GB allocated). OOM
// lower bounds always count. With several runs the maximum is kept.
//
// Peaks of a job whose memory a caching or preallocating framework held
// (Run.Holder), or that grew with the device they ran on, are no
// need: the least of them is the need's Ceiling.
func EstimateNeed(runs []Run) Need {
	need := Need{MiB: unknownMiB}
	runs, need.Holder = heldBeyondNeed(runs)
	take := func(r Run, kind string, seen float64) {
		what := kindWords[kind]
		if kind == NeedPeak {
			what = peakWords(r)
		}
		v, source := r.figure(seen, what)
		if v > need.MiB {
			need.MiB, need.Source, need.Kind, need.Profile, need.SeenMiB, need.Earlier = v, source, kind, r.Profile, seen, r.Earlier
			need.By = measuredBy(r, kind)
		}
	}
	allocated, peakRuns := 0, []Run{}
	for _, r := range runs {
		if r.AllocatedMiB >= 0 {
			allocated++
			take(r, NeedAllocated, r.AllocatedMiB)
		}
		if r.PeakMiB >= 0 && !r.GPUOOM && !r.Holder.Ceiling() { // a run out of memory peaked where it stopped, not at its need
			peakRuns = append(peakRuns, r)
		}
	}
	need.Runs = allocated
	if allocated == 0 && len(peakRuns) > 0 {
		smallest := slices.MinFunc(peakRuns, func(a, b Run) int { return cmp.Compare(a.UsableMiB, b.UsableMiB) }).UsableMiB
		for _, r := range peakRuns {
			if r.UsableMiB == smallest {
				need.Runs++
				take(r, NeedPeak, r.PeakMiB)
			}
		}
	}
	for _, r := range runs {
		if bound := oomBound(r); r.GPUOOM && bound > 0 {
			need.Runs++
			take(r, NeedOOM, bound)
		}
	}
	for _, r := range runs {
		if r.Profile == need.Profile && r.Earlier == need.Earlier && kindFigure(r, need.Kind) >= 0 {
			need.OnProfile++
		}
	}
	need.Ceiling = estimateCeiling(runs)
	return need
}

// estimateCeiling is the least peak of the runs whose peaks are ceilings,
// with the margin of an earlier version, or nil. It is never above the
// whole GPU's memory: a job held no more than its device had, and a bound
// past what any profile has (an earlier version's margin, NVML's count
// beside the site's usable figure) bounds nothing.
func estimateCeiling(runs []Run) *Need {
	var c *Need
	for _, r := range runs {
		if r.PeakMiB < 0 || r.GPUOOM || !r.Holder.Ceiling() {
			continue
		}
		v, source := r.figure(r.PeakMiB, peakWords(r))
		if r.DeviceMiB > 0 {
			v = min(v, r.DeviceMiB)
		}
		if c == nil || v < c.MiB {
			c = &Need{MiB: v, Runs: 1, Source: source, Kind: NeedCeiling, By: measuredBy(r, NeedPeak), Profile: r.Profile,
				OnProfile: 1, SeenMiB: r.PeakMiB, Earlier: r.Earlier, Holder: r.Holder}
		} else if v == c.MiB {
			c.OnProfile++
		}
	}
	return c
}

// Peaks that grew with the device: on a profile with at least this much
// more memory the peak was this many times the smaller one's, and by at
// least grewByMiB. A need does not depend on the device; a framework that
// caches or takes a share of what it sees does.
const (
	grewTimes = 1.5
	grewByMiB = 1024
)

// heldBeyondNeed is the runs with their holder: where nothing says what
// held the memory and the completed runs' peaks grew with the device, they
// are ceilings, said so. It returns the holder the runs share.
func heldBeyondNeed(runs []Run) ([]Run, Holder) {
	var small, big *Run
	for i := range runs {
		r := &runs[i]
		if r.Holder.Kind != HolderUnknown {
			return runs, r.Holder
		}
		if r.PeakMiB < 0 || !r.Completed || r.Earlier {
			continue
		}
		if small == nil || r.UsableMiB < small.UsableMiB || r.UsableMiB == small.UsableMiB && r.PeakMiB < small.PeakMiB {
			small = r
		}
		if big == nil || r.UsableMiB > big.UsableMiB || r.UsableMiB == big.UsableMiB && r.PeakMiB > big.PeakMiB {
			big = r
		}
	}
	if small == nil || big.UsableMiB <= small.UsableMiB || big.PeakMiB < grewTimes*small.PeakMiB || big.PeakMiB-small.PeakMiB < grewByMiB {
		return runs, Holder{}
	}
	h := Holder{Kind: HolderCaching, Why: fmt.Sprintf("its peak grew with the device, %s on %s and %s on %s, as a framework that caches or takes a share of the device does",
		FormatMiB(small.PeakMiB), small.Profile, FormatMiB(big.PeakMiB), big.Profile)}
	out := slices.Clone(runs)
	for i := range out {
		out[i].Holder = h
	}
	return out, h
}

// measuredBy is what measured a run's figure of a kind.
func measuredBy(r Run, kind string) string {
	switch {
	case kind == NeedAllocated:
		return MeasuredByFramework
	case kind == NeedOOM:
		return MeasuredByOOM
	case r.PeakSource != "":
		return r.PeakSource
	}
	return MeasuredByMonitor
}

var kindWords = map[string]string{NeedAllocated: "allocated peak", NeedPeak: "peak", NeedOOM: "OOM lower bound"}

// kindFigure is a run's figure of a kind, < 0 when it has none.
func kindFigure(r Run, kind string) float64 {
	switch kind {
	case NeedAllocated:
		return r.AllocatedMiB
	case NeedPeak:
		return r.PeakMiB
	case NeedOOM:
		if r.GPUOOM {
			return oomBound(r)
		}
	}
	return -1
}

// oomBound is what a run out of GPU memory proves it needed at least: more
// than it held at its peak, more than its message's figure, and more than
// its profile's usable memory, which it did not fit. A message's figure
// falls short of the profile where memory was held outside the framework's
// count (reserved, another library's, the context).
func oomBound(r Run) float64 { return max(r.NeedMiB, r.PeakMiB, r.UsableMiB) }

// ProfileRisk is the judgement for one profile.
type ProfileRisk struct {
	Level  string
	Reason string
}

// OOMRisk judges a profile with usableMiB of memory from all the job's runs
// (on any profile) and its estimated need. In order:
//   - high if a GPU OOM was seen on this profile or on one with at least as
//     much memory;
//   - low if a run completed here or on a profile with no more memory: it fits;
//   - unknown without a need estimate;
//   - else by need / usable: low below lowShare, medium below 95%, high above.
func OOMRisk(profile string, usableMiB float64, runs []Run, need Need, lowShare float64) ProfileRisk {
	if lowShare <= 0 {
		lowShare = DefaultLowRiskShare
	}
	for _, r := range runs {
		if r.GPUOOM && r.UsableMiB >= usableMiB {
			return ProfileRisk{RiskHigh, oomWhere(r, profile)}
		}
	}
	here, fitted, earlierHere, emulated := 0, "", 0, false
	var fittedMiB float64
	for _, r := range runs {
		switch {
		case r.Completed && r.Earlier && r.Profile == profile:
			earlierHere++
		case r.Completed && !r.Earlier && r.UsableMiB <= usableMiB:
			if r.Profile == profile {
				here++
				emulated = emulated || r.Emulated
			} else if fitted == "" || r.UsableMiB > fittedMiB {
				fitted, fittedMiB = r.Profile, r.UsableMiB
			}
		}
	}
	switch {
	case here > 0 && emulated:
		return ProfileRisk{RiskLow, "completed in its emulation, " + plural(here, "run")}
	case here > 0:
		return ProfileRisk{RiskLow, "completed here in " + plural(here, "run")}
	case fitted != "" && fittedMiB == usableMiB:
		return ProfileRisk{RiskLow, "completed on " + fitted + ", which has as much memory"}
	case fitted != "":
		return ProfileRisk{RiskLow, "completed on " + fitted + ", which has less memory"}
	}
	if !need.Known() {
		if c := need.Ceiling; c != nil {
			return ceilingRisk(*c, usableMiB, lowShare)
		}
		if earlierHere > 0 {
			return ProfileRisk{RiskMedium, "an earlier version completed here, but no memory figure says how close it came"}
		}
		return ProfileRisk{RiskUnknown, "no GPU memory evidence yet"}
	}
	share := need.MiB / usableMiB
	why := fmt.Sprintf("needs %s of %s usable (%.0f%%): the %s in %s",
		FormatMiB(need.MiB), FormatMiB(usableMiB), 100*share, need.Source, plural(max(need.OnProfile, 1), "run"))
	if need.Earlier {
		why += fmt.Sprintf(", plus %.0f%% for the edit", 100*(EarlierMargin-1))
	}
	level := RiskHigh
	switch {
	case share >= 1:
	case share < lowShare:
		level = RiskLow
	case share < HighRiskShare:
		level = RiskMedium
	}
	if level == RiskHigh && earlierHere > 0 {
		// It did fit once: an edit may have made it bigger, not certainly too big.
		return ProfileRisk{RiskMedium, why + "; an earlier version completed here"}
	}
	return ProfileRisk{level, why}
}

// ceilingRisk judges a profile by a ceiling of the need: well below the
// profile's memory it is a low risk; above, the risk is unknown, never
// high: the framework would have held less on a smaller device.
func ceilingRisk(c Need, usableMiB, lowShare float64) ProfileRisk {
	if share := c.MiB / usableMiB; share < lowShare {
		return ProfileRisk{RiskLow, fmt.Sprintf("needs at most %s of %s usable (%.0f%%): the %s, held beyond its need (%s)",
			FormatMiB(c.MiB), FormatMiB(usableMiB), 100*share, c.Source, c.Holder.Words())}
	}
	return ProfileRisk{RiskUnknown, fmt.Sprintf("the %s %s is no need but a ceiling of it (%s): only a run here, or the job's own allocated peak, tells whether it fits",
		FormatMiB(c.SeenMiB), c.Source, c.Holder.Words())}
}

// oomWhere says where a GPU OOM that rules a profile out was seen.
func oomWhere(r Run, profile string) string {
	what := "a GPU out-of-memory error was seen"
	if r.Earlier {
		what = "an earlier version of the script ran out of GPU memory"
	}
	if r.Profile == profile {
		return what + " here"
	}
	return what + " on " + r.Profile + ", which has as much memory or more"
}

// FormatMiB writes memory as people read it: 950 MiB, 2.8 GiB, 40 GiB.
func FormatMiB(mib float64) string {
	switch {
	case mib < 1024:
		return fmt.Sprintf("%.0f MiB", mib)
	case mib < 100*1024:
		return fmt.Sprintf("%.1f GiB", mib/1024) // as the tables print it: 9.5, 19.5, 79.3
	}
	return fmt.Sprintf("%.0f GiB", mib/1024)
}

// plural is textutil.Plural under the short name the sentences use.
var plural = textutil.Plural
