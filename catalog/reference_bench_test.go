package catalog

import (
	"bytes"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
)

// BenchmarkScanWithReferenceLines is the scan of an output of training
// lines that name no workload, without the reference benchmarks' lines
// and with Wulver's: what looking for them adds to every collect.
func BenchmarkScanWithReferenceLines(b *testing.B) {
	out := []byte(strings.Repeat("epoch 1 step 25: loss 12.2232, 812.4 tokens/s, lr 2.0e-04, grad norm 0.41 (data 0.02 s, step 0.38 s)\n", 20000))
	for _, c := range []struct {
		name  string
		lines *slurm.OutputWorkloads
	}{{"none", nil}, {"wulver", OutputWorkloads(wulver(b))}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(out)))
			for range b.N {
				if _, err := slurm.ScanOutput(bytes.NewReader(out), slurm.ScanOptions{Workloads: c.lines}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
