package collect

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/memstat"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// BenchmarkCollectAllUsers1MJobs is `collect --all-users --since DATE` on a
// whole cluster: a sacct process (here one that streams a saved 1M-job
// dump, 3M lines) piped into a fresh history as it prints. Targets: under
// 20 s on 2 cores, under 200 MB peak resident memory. Then the next,
// incremental collect: from the watermark, 10,000 jobs (1,000 of them new)
// and the unended jobs the window did not return asked about by id.
func BenchmarkCollectAllUsers1MJobs(b *testing.B) {
	if testing.Short() {
		b.Skip("the 1M-job collect takes seconds; not in -short")
	}
	const jobs = 1_000_000
	dir := b.TempDir()
	writeBenchDump(b, filepath.Join(dir, "full.psv"), sacctgen.FirstJobID, jobs)
	writeBenchDump(b, filepath.Join(dir, "recent.psv"), sacctgen.FirstJobID+jobs-9000, 10_000)
	writeBenchDump(b, filepath.Join(dir, "none.psv"), sacctgen.FirstJobID, 0)
	sacct := "#!/bin/sh\nd=$(dirname \"$0\")\ncase \"$*\" in *--jobs=*) exec cat \"$d/none.psv\" ;; esac\nexec cat \"$d/$(cat \"$d/window\")\"\n"
	if err := os.WriteFile(filepath.Join(dir, "sacct"), []byte(sacct), 0o755); err != nil {
		b.Fatal(err)
	}
	site, err := catalog.Builtin("wulver")
	if err != nil {
		b.Fatal(err)
	}
	q := slurm.SacctQuery{AllUsers: true, Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.Local)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st, err := history.Open(context.Background(), filepath.Join(b.TempDir(), "site.db"))
		if err != nil {
			b.Fatal(err)
		}
		col := &Collector{Store: st, Site: site, Slurm: &slurm.Client{Bin: dir}, Cluster: "wulver"}
		os.WriteFile(filepath.Join(dir, "window"), []byte("full.psv"), 0o644)
		runtime.GC()
		memstat.ResetPeak()
		start := time.Now()
		res, _, err := col.ImportWindow(context.Background(), q, WindowOptions{})
		d := time.Since(start)
		if err != nil || res.New != jobs {
			b.Fatalf("collect: %+v %v", res.ImportStats, err)
		}
		b.ReportMetric(jobs/d.Seconds(), "jobs/s")
		b.ReportMetric(d.Seconds(), "s/1M-jobs")
		b.ReportMetric(memstat.PeakMiB(), "peak-RSS-MiB")

		os.WriteFile(filepath.Join(dir, "window"), []byte("recent.psv"), 0o644)
		start = time.Now()
		res, w, err := col.ImportWindow(context.Background(), slurm.SacctQuery{AllUsers: true}, WindowOptions{})
		if err != nil || res.New != 1000 || !w.FromWatermark {
			b.Fatalf("incremental collect: %+v %+v %v", res.ImportStats, w, err)
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "incremental-ms")
		st.Close()
	}
}

func writeBenchDump(b *testing.B, path string, first, n int) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, sacctgen.NewFrom(first, n, slurm.SacctDelimiter)); err != nil {
		b.Fatal(err)
	}
}
