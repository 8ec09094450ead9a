package runmodel

import (
	"testing"

	"github.com/migadvisor/migadvisor/catalog"
)

// BenchmarkExplainTimes is the runtime model's choice for a job measured on
// Wulver's four profiles (every explanation fitted on every hold-out) and on
// two (the site's reference benchmarks decide), then one prediction each.
func BenchmarkExplainTimes(b *testing.B) {
	site, err := catalog.Builtin("wulver")
	if err != nil {
		b.Fatal(err)
	}
	set, _ := catalog.ReferenceFor(site)
	bench, _ := set.Benchmark("gromacs_performance")
	four := BenchmarkPoints(site, bench)
	two := []Point{four[1], four[3]}
	refs := ReferencesOf(site)
	b.ReportAllocs()
	for b.Loop() {
		for _, points := range [][]Point{four, two} {
			s, _ := ExplainTimes(points, refs)
			s.Predict(points, four[0].Shares)
		}
	}
}
