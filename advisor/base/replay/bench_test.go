package replay

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/internal/memstat"
)

// BenchmarkReplay1M replays a million jobs on 500 GPUs: 400 cut
// 3g.40gb+2g.20gb+1g.10gb+1g.10gb and 100 whole, offered at 90% of what
// they can run, with Slurm's backfill defaults (issue 41: the whole plan
// in 60 s on 2 cores and 512 MiB, the replay a small part of it).
func BenchmarkReplay1M(b *testing.B) {
	slots := Slots{}.Add(400, "3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb").Add(100, wholeGPU)
	jobs := generate(rand.New(rand.NewPCG(41, 1)), 1_000_000, slots, 0.9)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		memstat.ResetPeak()
		began := time.Now()
		r, err := Replay(slots, jobs, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(began).Seconds(), "s/1M-jobs")
		if peak := memstat.PeakMiB(); peak > 0 {
			b.ReportMetric(peak, "peak-RSS-MiB")
		}
		for _, p := range r.Profiles {
			if p.Profile == wholeGPU {
				b.ReportMetric(float64(p.P95WaitS)/3600, "whole-GPU-p95-wait-h")
				b.ReportMetric(p.Busy, "whole-GPU-busy")
			}
		}
	}
}
