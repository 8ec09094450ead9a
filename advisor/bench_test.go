package advisor

import (
	"os"
	"testing"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// BenchmarkReadAndLint is what advice at submission costs before any history
// lookup: read the site, parse the script, lint it.
func BenchmarkReadAndLint(b *testing.B) {
	data, err := os.ReadFile("../testdata/scripts/wulver_mig.sh")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		site, err := catalog.Builtin("wulver")
		if err != nil {
			b.Fatal(err)
		}
		Lint(slurm.Parse("job.sh", data), site)
	}
}
