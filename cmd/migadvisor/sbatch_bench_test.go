package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkSbatchWrapper measures what the wrapper adds to a submission: the
// same stub sbatch run directly and through `migadvisor sbatch`, one after
// the other, as separate processes (so the wrapper's start-up counts). It
// reports the medians and the median of the differences, with an empty
// history (record only) and with runs of the script in it (advice
// computed and printed, then the record).
func BenchmarkSbatchWrapper(b *testing.B) {
	bin := sbatchBinary(b)
	dir := b.TempDir()
	stub := filepath.Join(dir, "sbatch")
	os.WriteFile(stub, []byte("#!/bin/sh\necho \"Submitted batch job $$\"\n"), 0o755)
	script := filepath.Join(dir, "job.sh")
	os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=5\npython train.py\n"), 0o644)
	for _, withRuns := range []bool{false, true} {
		name := map[bool]string{false: "empty-history", true: "advice"}[withRuns]
		b.Run(name, func(b *testing.B) {
			db := filepath.Join(b.TempDir(), "history.db")
			if withRuns {
				historyWithJob2(b, db, script)
			}
			env := append(os.Environ(), "MIGADVISOR_DB="+db, "MIGADVISOR_SBATCH="+stub, "MIGADVISOR_SITE=wulver")
			direct, wrapped, added := make([]float64, 0, b.N), make([]float64, 0, b.N), make([]float64, 0, b.N)
			for range b.N {
				d := timeRun(b, env, stub, script)
				w := timeRun(b, env, bin, "sbatch", script)
				direct, wrapped, added = append(direct, d), append(wrapped, w), append(added, w-d)
			}
			b.ReportMetric(median(direct), "direct-p50-ms")
			b.ReportMetric(median(wrapped), "wrapped-p50-ms")
			b.ReportMetric(median(added), "added-p50-ms")
			b.ReportMetric(0, "ns/op") // the per-op time mixes both runs; the medians say it
		})
	}
}

func timeRun(b *testing.B, env []string, name string, args ...string) float64 {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s: %v\n%s", name, err, out)
	}
	return float64(time.Since(start).Microseconds()) / 1000
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
