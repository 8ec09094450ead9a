package advisor

import (
	"fmt"
	"math"
	"slices"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
)

// The third stage: a profile judged eligible on its own may still be too
// slow beside the others; with --max-slowdown it is left out, which only a
// look at every judged profile can tell.

// applySlowdown returns the profiles with those more than maxSlowdown
// times slower than the fastest profile the job can run on made
// ineligible, and why; maxSlowdown 0: none.
func applySlowdown(profiles []ProfileAdvice, maxSlowdown float64) []ProfileAdvice {
	if maxSlowdown <= 0 {
		return profiles
	}
	fastest, name := math.Inf(1), ""
	for _, pa := range profiles {
		if pa.RuntimeS != nil && pa.OOMRisk != memory.RiskHigh && *pa.RuntimeS < fastest {
			fastest, name = *pa.RuntimeS, pa.Profile
		}
	}
	out := slices.Clone(profiles)
	for i := range out {
		if pa := &out[i]; pa.Eligible && *pa.RuntimeS > maxSlowdown*fastest {
			pa.Eligible = false
			pa.Reason = fmt.Sprintf("%.1f× slower than %s, beyond --max-slowdown %g", *pa.RuntimeS/fastest, name, maxSlowdown)
		}
	}
	return out
}
