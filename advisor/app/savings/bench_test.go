package savings

import (
	"context"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// BenchmarkBuild reports on a large site: a history of 100k jobs (80k on
// a GPU, with jobstats summaries) by 500 users, the period its newer half;
// 1,000 groups of one user's jobs of one name, each judged by recommend on
// every such job of the history.
func BenchmarkBuild(b *testing.B) {
	const jobs = 100_000
	ctx := context.Background()
	site, err := catalog.Builtin("wulver")
	if err != nil {
		b.Fatal(err)
	}
	gen := sacctgen.New(jobs, slurm.SacctDelimiter)
	gen.Jobstats = true
	st := historytest.FromReader(b, site, gen, "")
	// sacctgen's job i starts at 1,790,000,000 + 7i.
	req := Request{Site: site, Thresholds: site.Report.WithDefaults(), Period: history.Period{From: time.Unix(1_790_000_000+7*jobs/2, 0)}}
	b.ResetTimer()
	var rep *Report
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if rep, err = Build(ctx, st, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rep.Total.Jobs*b.N)/time.Since(start).Seconds(), "jobs/s")
	b.ReportMetric(float64(len(rep.Scripts)), "scripts")
	b.ReportMetric(float64(rep.Total.Smaller), "smaller")
}
