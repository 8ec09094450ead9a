package slurm

import (
	"math"
	"testing"
)

// A run's share is its measure over the whole GPU's, its SMs scaled by the
// clock it ran at over the GPU's rated clock (an H100's 16 SMs at 1980 MHz
// beside 132 at 1619, under its power limit: the whole GPU's run at 0.82
// of its throughput); without a rated clock, over the whole GPU's run's;
// without a whole-GPU measure it is unknown.
func TestRanAt(t *testing.T) {
	rec := EmulationRecord{Whole: &SliceMeasure{SMs: 132, CopyGBs: 2968},
		Runs: []EmulatedRun{
			{Profile: "1g.10gb", Emulated: true, Measured: &SliceMeasure{SMs: 16, CopyGBs: 1128, ClockMHz: 1980}},
			{Profile: "full", Measured: &SliceMeasure{SMs: 132, CopyGBs: 2968, ClockMHz: 1619}}}}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if sm, bw, ok := rec.RanAt(rec.Runs[0], 1980); !ok || !near(sm, 16.0/132) || !near(bw, 1128.0/2968) {
		t.Errorf("1g.10gb at the rated clock: %v %v %v", sm, bw, ok)
	}
	if sm, bw, ok := rec.RanAt(rec.Runs[1], 1980); !ok || !near(sm, 1619.0/1980) || bw != 1 {
		t.Errorf("the whole GPU, throttled: %v %v %v", sm, bw, ok)
	}
	// Either way, the ratio of the two runs' shares is the same.
	if sm, _, _ := rec.RanAt(rec.Runs[0], 0); !near(sm, 16.0/132*1980/1619) {
		t.Errorf("1g.10gb without a rated clock: %v", sm)
	}
	if sm, bw, ok := rec.RanAt(rec.Runs[1], 0); !ok || sm != 1 || bw != 1 {
		t.Errorf("the whole GPU without a rated clock: %v %v %v", sm, bw, ok)
	}
	rec.Runs[1].Measured.ClockMHz = 0 // no clock for the whole GPU: the SMs alone
	if sm, _, _ := rec.RanAt(rec.Runs[0], 0); !near(sm, 16.0/132) {
		t.Errorf("without the whole GPU's clock: %v", sm)
	}
	rec.Whole = nil
	if _, _, ok := rec.RanAt(rec.Runs[0], 1980); ok {
		t.Error("a share without the whole GPU's measure")
	}
}
