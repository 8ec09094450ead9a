package slurm_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// sacctReaderFloor is BenchmarkSacctReader's target (docs/performance.md):
// half the development machine's figure.
const sacctReaderFloor = 500_000

// BenchmarkSacctReader reads a 100k-job dump (300k lines); the target is
// at least 500k lines/s, and it fails under that.
func BenchmarkSacctReader(b *testing.B) {
	const jobs = 100_000
	data := sacctgen.Bytes(jobs, slurm.SacctDelimiter)
	lines := 0
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		r, err := slurm.NewSacctReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			_, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != jobs || len(r.Skipped) != 0 {
			b.Fatalf("%d jobs, %d skipped", n, len(r.Skipped))
		}
		lines += 1 + 3*jobs
	}
	rate := float64(lines) / time.Since(start).Seconds()
	b.ReportMetric(rate, "lines/s")
	if rate < sacctReaderFloor {
		b.Errorf("the sacct reader reads %.0f lines/s (%d dumps of %d jobs), under the target of %d", rate, b.N, jobs, sacctReaderFloor)
	}
}
