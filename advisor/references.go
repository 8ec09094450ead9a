package advisor

import (
	"fmt"
	"slices"

	"github.com/migadvisor/migadvisor/catalog"
)

// BenchmarkPoints are a benchmark's completed runs as points on the site.
func BenchmarkPoints(site *catalog.Site, b *catalog.Benchmark) []Point {
	var points []Point
	for _, r := range b.Rows {
		p, ok := site.Profile(r.Profile)
		if !ok || r.OOM || r.Seconds <= 0 {
			continue
		}
		points = append(points, Point{Profile: r.Profile, Shares: site.Shares(p), Seconds: r.Seconds})
	}
	return points
}

// PriorScaling is the scaling of a job measured on one profile or none.
// Where the monitor saw its GPU utilization u (%) on a profile of SM share
// s, the idle share of the GPU is the job's fixed part: under the model,
// u = busy / (fixed + busy), so f = (1 − u) / (u·s + 1 − u). Its memory
// utilization m (%, the time device memory was read or written; < 0:
// unknown) says what the busy part waits on (boundBy). Without either, the
// site's reference benchmarks give it.
func PriorScaling(site *catalog.Site, utilization, memUtilization float64, measured []Point) Scaling {
	if utilization < 0 || utilization > 100 || len(measured) != 1 {
		return ReferencePrior(site, "")
	}
	u, sh := utilization/100, measured[0].Shares.SM
	f := clamp01((1 - u) / (u*sh + 1 - u))
	r, busy := boundBy(utilization, memUtilization)
	return Scaling{Resource: r, Fixed: f,
		Source: fmt.Sprintf("fixed share %.2f, from the GPU utilization on %s", f, measured[0].Profile),
		Why: fmt.Sprintf("one profile measured: the GPU was busy %.0f%% of the time on %s%s, and only that part shrinks on a bigger slice",
			utilization, measured[0].Profile, busy)}
}

// Memory busy for this share of the GPU's busy time or more is a job bound
// by bandwidth; below boundBySMs, by the SMs. Measured on an H100
// (testdata/nvml/h100-utilization.csv): an fp16 GEMM keeps memory busy 32%
// of its busy time, a 4 GiB copy 100%.
const (
	boundByBandwidth = 0.75
	boundBySMs       = 0.5
)

// boundBy is the resource the busy part of a job waits on, from its GPU and
// memory utilization, and those words for the reason.
func boundBy(utilization, memUtilization float64) (catalog.Resource, string) {
	if memUtilization < 0 || utilization <= 0 {
		return catalog.SMs, ""
	}
	words := fmt.Sprintf(" (its memory %.0f%%)", memUtilization)
	switch ratio := memUtilization / utilization; {
	case ratio >= boundByBandwidth:
		return catalog.Bandwidth, words
	case ratio < boundBySMs:
		return catalog.SMs, words
	}
	return catalog.Mixed, words
}

// ReferencePrior is the prior from the site's reference benchmarks but the
// one named exclude ("": all of them): the median of their fixed shares
// fitted on the SMs (on Wulver's tables it predicts one profile's pair
// better than the bandwidth or both). Excluding a job's own benchmark measures how
// well the prior serves a job the references do not already hold.
func ReferencePrior(site *catalog.Site, exclude string) Scaling {
	var fs []float64
	if set, ok := catalog.ReferenceFor(site); ok {
		for i := range set.Benchmarks {
			if b := &set.Benchmarks[i]; b.IsPrior() && b.Name != exclude {
				if f, ok := fitFixed(catalog.SMs, usable(BenchmarkPoints(site, b))); ok {
					fs = append(fs, f)
				}
			}
		}
	}
	if len(fs) == 0 {
		return Scaling{Fixed: 0.5, Source: "fixed share 0.5, a guess between GPU-bound and not", exclude: exclude,
			Why: "one profile measured and no reference benchmarks: a guess halfway between GPU-bound and not"}
	}
	slices.Sort(fs)
	f := median(fs)
	why := fmt.Sprintf("one profile measured: scaled like the median of %d %s reference benchmarks (%.0f%% of the time fixed)", len(fs), site.Name, 100*f)
	return Scaling{Resource: catalog.SMs, Fixed: f, Why: why, exclude: exclude,
		Source: fmt.Sprintf("fixed share %.2f, the median of %d %s reference benchmarks", f, len(fs), site.Name)}
}
