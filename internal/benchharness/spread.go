// Package benchharness times programs as their users meet them, for the
// benchmarks that anyone can repeat (docs/performance.md): commands run
// side by side by parallel submitters, each submission timed to the moment
// its process exits (a shell's prompt is back) and to the moment the last
// process it started has exited, with the CPU time of all of them and the
// order in which their lines reached the one stream a terminal would show.
// Runs are paired and interleaved (each round runs every command once, the
// order reversed every other round), so a machine whose load drifts shifts
// both sides of a pair alike, and every figure is reported with its spread.
package benchharness

import (
	"fmt"
	"math"
	"slices"
)

// Spread is a sample's distribution: its size, least value, median, 95th
// and 99th percentiles and greatest value, in the sample's unit.
type Spread struct {
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
}

// SpreadOf is the spread of xs; the zero Spread when xs is empty.
func SpreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Sorted(slices.Values(xs))
	return Spread{N: len(s), Min: s[0], Median: Quantile(s, 0.5), P95: Quantile(s, 0.95), P99: Quantile(s, 0.99), Max: s[len(s)-1]}
}

// Quantile is the nearest-rank quantile q (0 < q ≤ 1) of a sorted sample:
// its least value with at least a share q of the sample at or below it. The
// median of an even-sized sample is the lower of its middle two; a p99 of
// fewer than 100 values is the greatest.
func Quantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// String is the spread as "min / median / p95 / p99 / max" to two decimals.
func (s Spread) String() string {
	return fmt.Sprintf("%.2f / %.2f / %.2f / %.2f / %.2f", s.Min, s.Median, s.P95, s.P99, s.Max)
}
