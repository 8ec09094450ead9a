package collect

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/memstat"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// BenchmarkCollectAllUsers1MJobs's targets for the whole collect
// (docs/performance.md): under 20 s on 2 cores, about three times the
// development machine's figure, and memory bounded, under 200 MB of peak
// resident memory, four times it.
const (
	collect1MBoundS     = 20.0
	collect1MBoundRSSMB = 200.0
)

// BenchmarkCollectAllUsers1MJobs is `collect --all-users --since DATE` on a
// whole cluster: a sacct process (here one that streams a saved 1M-job
// dump, 3M lines) piped into a fresh history as it prints. Targets: under
// 20 s on 2 cores, under 200 MB peak resident memory; it fails over
// either. Then the next,
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
		debug.FreeOSMemory() // a GC, and the heap of what ran before given back
		memstat.ResetPeak()
		start := time.Now()
		res, _, err := col.ImportWindow(context.Background(), q, WindowOptions{})
		d := time.Since(start)
		if err != nil || res.New != jobs {
			b.Fatalf("collect: %+v %v", res.ImportStats, err)
		}
		b.ReportMetric(jobs/d.Seconds(), "jobs/s")
		b.ReportMetric(d.Seconds(), "s/1M-jobs")
		if d.Seconds() > collect1MBoundS {
			b.Errorf("collect --all-users of 1M jobs takes %.1f s, over the target of %.0f s", d.Seconds(), collect1MBoundS)
		}
		if peak := memstat.PeakMiB(); peak > 0 {
			b.ReportMetric(peak, "peak-RSS-MiB")
			if peak*1.048576 > collect1MBoundRSSMB { // MiB to MB
				b.Errorf("collect --all-users of 1M jobs peaks at %.0f MiB resident (%.0f MB), over the target of %.0f MB", peak, peak*1.048576, collect1MBoundRSSMB)
			}
		}

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

// jobstatsShareBound is the least share of its speed without summaries
// that a collect keeps with them (median of the pairs): loose enough for a
// shared CI machine, tight enough that summaries costing twice what they
// cost now fail (docs/performance.md).
const jobstatsShareBound = 0.5

// BenchmarkCollectJobstatsShare is `collect --sacct-file` of 200k jobs
// whose ended GPU jobs carry a jobstats summary in AdminComment, against
// the same 200k jobs without, each into a fresh history, in pairs whose
// order alternates (with first, then without first: ABBA), so that a
// machine whose load drifts slows both sides of a pair alike. It reports
// the share of the speed without that the collect keeps with summaries,
// min / median / max over the pairs ($MIGADVISOR_BENCH_PAIRS, default 8;
// run it with -benchtime 1x), and fails where the median is under
// jobstatsShareBound.
func BenchmarkCollectJobstatsShare(b *testing.B) {
	const jobs = 200_000
	dir := b.TempDir()
	plain, summaries := filepath.Join(dir, "plain.psv"), filepath.Join(dir, "jobstats.psv")
	writeBenchDump(b, plain, sacctgen.FirstJobID, jobs)
	gen := sacctgen.New(jobs, slurm.SacctDelimiter)
	gen.Jobstats = true
	writeBenchReader(b, summaries, gen)
	site, err := catalog.Builtin("wulver")
	if err != nil {
		b.Fatal(err)
	}
	collect := func(dump string, wantJobstats bool) time.Duration {
		st, err := history.Open(context.Background(), filepath.Join(b.TempDir(), "history.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		in, err := os.Open(dump)
		if err != nil {
			b.Fatal(err)
		}
		defer in.Close()
		col := &Collector{Store: st, Site: site, Cluster: "wulver"}
		runtime.GC() // the last import's garbage is not this one's to collect
		start := time.Now()
		res, err := col.ImportDump(context.Background(), in)
		d := time.Since(start)
		if err != nil || res.New != jobs || (res.Jobstats > 0) != wantJobstats {
			b.Fatalf("collect %s: %+v %v", dump, res.ImportStats, err)
		}
		return d
	}
	collect(summaries, true) // the page cache holds both dumps from here on
	collect(plain, false)
	b.ResetTimer()
	var shares, with, without []float64
	for i := range b.N * benchPairs(b) {
		var w, wo time.Duration
		if i%2 == 0 {
			w = collect(summaries, true)
			wo = collect(plain, false)
		} else {
			wo = collect(plain, false)
			w = collect(summaries, true)
		}
		shares = append(shares, wo.Seconds()/w.Seconds())
		with, without = append(with, jobs/w.Seconds()), append(without, jobs/wo.Seconds())
	}
	slices.Sort(shares)
	median := shares[(len(shares)-1)/2] // the lower middle of an even count
	b.ReportMetric(median, "share-p50")
	b.ReportMetric(shares[0], "share-min")
	b.ReportMetric(shares[len(shares)-1], "share-max")
	b.ReportMetric(slices.Max(with), "with-max-jobs/s")
	b.ReportMetric(slices.Min(with), "with-min-jobs/s")
	b.ReportMetric(slices.Max(without), "without-max-jobs/s")
	b.ReportMetric(slices.Min(without), "without-min-jobs/s")
	b.ReportMetric(0, "ns/op") // each op is the pairs; the metrics say it
	if median < jobstatsShareBound {
		b.Errorf("with jobstats summaries a collect keeps %.2f of its speed (median of %d pairs: %.2f-%.2f), under %.2f",
			median, len(shares), shares[0], shares[len(shares)-1], jobstatsShareBound)
	}
}

// benchPairs is $MIGADVISOR_BENCH_PAIRS, else 8.
func benchPairs(b *testing.B) int {
	s := os.Getenv("MIGADVISOR_BENCH_PAIRS")
	if s == "" {
		return 8
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("MIGADVISOR_BENCH_PAIRS=%q: a number of pairs", s)
	}
	return n
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

func writeBenchReader(b *testing.B, path string, r io.Reader) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, r); err != nil {
		b.Fatal(err)
	}
}
