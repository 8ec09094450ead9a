package slurm

import (
	"os"
	"testing"
)

func benchScript(b *testing.B) []byte {
	b.Helper()
	data, err := os.ReadFile("../testdata/scripts/wulver_mig.sh")
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkParse(b *testing.B) {
	data := benchScript(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Parse("job.sh", data)
	}
}

func BenchmarkRewrite(b *testing.B) {
	s := Parse("job.sh", benchScript(b))
	v := Variant{GPURequest: "--gres=gpu:a100_20g:1", JobName: "gpu_job-2g.20gb"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := s.Rewrite(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFingerprint(b *testing.B) {
	s := Parse("job.sh", benchScript(b))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s.Fingerprint()
	}
}
