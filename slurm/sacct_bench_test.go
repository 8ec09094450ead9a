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

// BenchmarkSacctReader reads a 100k-job dump (300k lines); the target is
// at least 500k lines/s.
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
	b.ReportMetric(float64(lines)/time.Since(start).Seconds(), "lines/s")
}
