package advisor

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/memstat"
	"github.com/migadvisor/migadvisor/internal/sacctgen"
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

// BenchmarkRecommend1MJobs is recommend on a whole cluster's history: a
// million jobs, twelve of them runs of the script. The target is under 50 ms
// (reading the script's runs and the queue waits through indexes).
func BenchmarkRecommend1MJobs(b *testing.B) {
	ctx := context.Background()
	site, err := catalog.Builtin("wulver")
	if err != nil {
		b.Fatal(err)
	}
	st, err := history.Open(ctx, filepath.Join(b.TempDir(), "history.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	r, err := slurm.NewSacctReader(sacctgen.New(1_000_000, slurm.SacctDelimiter))
	if err != nil {
		b.Fatal(err)
	}
	profileOf := func(t string, n int) string {
		if p, ok := site.ProfileForType(t); ok && n > 0 {
			return p.Name
		}
		return ""
	}
	if _, err := st.ImportJobs(ctx, r.Next, history.ImportOptions{Cluster: "wulver", Profile: profileOf}); err != nil {
		b.Fatal(err)
	}
	data := []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100_40g:1\n#SBATCH --time=4:00:00\npython train.py\n")
	script := slurm.Parse("train.sh", data)
	var subs []history.Submission
	for i := 0; i < 12; i++ { // sacctgen's jobs 1000000+i cycle through the GPU types
		subs = append(subs, history.Submission{Cluster: "wulver", JobID: fmt.Sprint(1_000_000 + 400_000 + i),
			Fingerprint: script.Fingerprint(), Source: "train.sh", Script: "train.sh", Submitted: time.Unix(1_790_000_000, 0)})
	}
	if err := st.RecordSubmissions(ctx, subs); err != nil {
		b.Fatal(err)
	}
	since := time.Unix(0, 0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		job, err := Gather(ctx, st, site, "train.sh", script, since)
		if err != nil {
			b.Fatal(err)
		}
		if len(job.Runs) == 0 || len(job.QueueWaitS) != 4 {
			b.Fatalf("%d runs, waits %v", len(job.Runs), job.QueueWaitS)
		}
		if _, err := Recommend(site, job, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/recommend")
}

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
