package advisor

import (
	"fmt"
	"slices"
)

// Levels of the risk that a job runs out of GPU memory on a profile.
const (
	RiskLow     = "low"
	RiskMedium  = "medium"
	RiskHigh    = "high"
	RiskUnknown = "unknown" // no memory evidence: never read as low
)

// DefaultLowRiskShare is the share of a profile's usable memory below which
// a known need is a low risk; up to HighRiskShare it is medium.
const (
	DefaultLowRiskShare = 0.80
	HighRiskShare       = 0.95
)

// unknownMiB marks a figure no run gave.
const unknownMiB = -1

// MemoryRun is what one run of a job says about its GPU memory.
type MemoryRun struct {
	Profile   string
	UsableMiB float64 // the profile's usable memory
	Completed bool    // ended COMPLETED, without a GPU OOM
	GPUOOM    bool
	NeedMiB   float64 // lower bound from the OOM message; < 0 if none
	PeakMiB   float64 // measured peak (the monitor's, else gres/gpumem); < 0 if none
	// AllocatedMiB is the framework's own peak of allocated memory (e.g.
	// MIGADVISOR_METRIC peak_allocated_mib): unlike a peak seen by NVML it is
	// not inflated by a caching allocator that grows into a bigger slice.
	AllocatedMiB float64 // < 0 if none
}

// MemoryNeed is the estimate of a job's GPU memory need, with where it came from.
type MemoryNeed struct {
	MiB    float64 // < 0: unknown
	Runs   int     // runs whose figures went into it
	Source string
}

// Known reports whether any run gave a figure.
func (n MemoryNeed) Known() bool { return n.MiB >= 0 }

// EstimateNeed combines the runs' figures. Allocated peaks are preferred
// over NVML peaks; an NVML peak is taken from the smallest profile that has
// one, where caching inflated it least (Wulver's LLM run reserved 8.97 GB on
// a 10gb slice but 23.55 GB on 40gb for the same 5.68 GB allocated). OOM
// lower bounds always count. With several runs the maximum is kept.
func EstimateNeed(runs []MemoryRun) MemoryNeed {
	need := MemoryNeed{MiB: unknownMiB}
	take := func(v float64, source string) {
		if v > need.MiB {
			need.MiB, need.Source = v, source
		}
	}
	allocated, peakRuns := 0, []MemoryRun{}
	for _, r := range runs {
		if r.AllocatedMiB >= 0 {
			allocated++
			take(r.AllocatedMiB, "allocated peak on "+r.Profile)
		}
		if r.PeakMiB >= 0 {
			peakRuns = append(peakRuns, r)
		}
	}
	need.Runs = allocated
	if allocated == 0 && len(peakRuns) > 0 {
		smallest := slices.MinFunc(peakRuns, func(a, b MemoryRun) int { return cmpFloat(a.UsableMiB, b.UsableMiB) }).UsableMiB
		for _, r := range peakRuns {
			if r.UsableMiB == smallest {
				need.Runs++
				take(r.PeakMiB, "peak on "+r.Profile)
			}
		}
	}
	for _, r := range runs {
		if r.GPUOOM && r.NeedMiB >= 0 {
			need.Runs++
			take(r.NeedMiB, "OOM lower bound on "+r.Profile)
		}
	}
	return need
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

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
func OOMRisk(profile string, usableMiB float64, runs []MemoryRun, need MemoryNeed, lowShare float64) ProfileRisk {
	if lowShare <= 0 {
		lowShare = DefaultLowRiskShare
	}
	for _, r := range runs {
		if r.GPUOOM && r.UsableMiB >= usableMiB {
			where := "here"
			if r.Profile != profile {
				where = "on " + r.Profile + ", which has as much memory or more"
			}
			return ProfileRisk{RiskHigh, "a GPU out-of-memory error was seen " + where}
		}
	}
	here, fitted := 0, ""
	for _, r := range runs {
		if r.Completed && r.UsableMiB <= usableMiB {
			fitted = r.Profile
			if r.Profile == profile {
				here++
			}
		}
	}
	switch {
	case here > 0:
		return ProfileRisk{RiskLow, fmt.Sprintf("completed here (%s)", plural(here, "run"))}
	case fitted != "":
		return ProfileRisk{RiskLow, "completed on " + fitted + ", which has no more memory"}
	}
	if !need.Known() {
		return ProfileRisk{RiskUnknown, "no GPU memory evidence: run it under the monitor"}
	}
	share := need.MiB / usableMiB
	why := fmt.Sprintf("needs %.0f MiB (%s, %s) of %.0f MiB usable: %.0f%%", need.MiB, need.Source, plural(need.Runs, "run"), usableMiB, 100*share)
	switch {
	case share >= 1:
		return ProfileRisk{RiskHigh, why}
	case share < lowShare:
		return ProfileRisk{RiskLow, why}
	case share < HighRiskShare:
		return ProfileRisk{RiskMedium, why}
	}
	return ProfileRisk{RiskHigh, why}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
