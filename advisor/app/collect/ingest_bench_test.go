package collect

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// BenchmarkCollectSteps is what each step of collect --sacct-file costs
// into a fresh history (issue 36), on a dump of MIGADVISOR_BENCH_JOBS jobs
// (default 1M; each job's line and its batch step's), in its order, wall
// seconds: the accounting import (import-s: reading and writing, the
// index of names built after, ImportStages in advisor/base/history itemizes
// it); the links (links-s: jobs filed under a fallback cluster name, the
// wrapper's submissions linked to their jobs); the scan of job outputs
// (outputs-s: the tracked jobs' and the user's recent sessions'); and the
// refresh of the user's advice index the command makes after (refresh-s).
func BenchmarkCollectSteps(b *testing.B) {
	if testing.Short() {
		b.Skip("imports a 1M-job dump; not in -short")
	}
	jobs := sacctgen.BenchJobs(b, 1_000_000)
	for _, c := range []struct {
		name string
		dump *sacctgen.Reader
	}{{"dump=full", sacctgen.New(jobs, "|")}, {"dump=lean", sacctgen.NewLean(jobs, "|")}} {
		b.Run(c.name, func(b *testing.B) { collectSteps(b, jobs, c.dump) })
	}
}

// collectSteps times each step of a collect of dump's jobs.
func collectSteps(b *testing.B, jobs int, reader *sacctgen.Reader) {
	dump := filepath.Join(b.TempDir(), "sacct.psv")
	sacctgen.WriteJobAndBatch(b, dump, reader)
	site, err := catalog.Builtin("wulver")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for range b.N {
		db := filepath.Join(b.TempDir(), "history.db")
		col, err := Open(ctx, Where{Site: site, DB: db})
		if err != nil {
			b.Fatal(err)
		}
		step := func(name string, run func() error) {
			start := time.Now()
			if err := run(); err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			b.ReportMetric(time.Since(start).Seconds(), name+"-s")
		}
		step("import", func() error {
			res, err := col.importDumpFile(ctx, RunOptions{Selection: Selection{Dump: dump}})
			if err == nil && res.New != jobs {
				b.Fatalf("imported %+v", res.ImportStats)
			}
			return err
		})
		step("links", func() error {
			if _, err := col.FileTogether(ctx); err != nil {
				return err
			}
			_, err := col.LinkPending(ctx, time.Now(), time.Time{})
			return err
		})
		step("outputs", func() error {
			_, err := col.ScanOutputs(ctx, nil, nil)
			return err
		})
		col.Store.Close()
		step("refresh", func() error {
			_, err := index.Refresh(ctx, db)
			return err
		})
	}
	b.ReportMetric(0, "ns/op") // the steps say it
}
