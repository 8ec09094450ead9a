//go:build mariadb

package mariadb

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// BenchmarkMariaDBCollect is `collect --all-users` into a site store: a
// 200k-job dump imported into the collector's history with its outbox on,
// and pushed to the dev cluster's MariaDB, first one after the other
// ("push-jobs/s" is the push alone), then overlapping as collect does
// (PushWhile: "jobs/s", the target is 50k); and the store copied into a
// new history, as a publish starts ("copy-jobs/s").
func BenchmarkMariaDBCollect(b *testing.B) {
	const jobs = 200_000
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		store, err := Open(ctx, testStore(b))
		if err != nil {
			b.Fatal(err)
		}
		h, _ := collectorHistory(b, store, jobs)
		b.StartTimer()
		start := time.Now()
		if _, err := store.Push(ctx, h, nil); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(jobs/time.Since(start).Seconds(), "push-jobs/s")
		cp, err := history.Open(ctx, filepath.Join(b.TempDir(), "copy.db"))
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		if n, err := store.CopyInto(ctx, cp); err != nil || n != jobs {
			b.Fatalf("copied %d jobs: %v", n, err)
		}
		b.ReportMetric(jobs/time.Since(start).Seconds(), "copy-jobs/s")
		cp.Close()
		store.Close()

		b.StopTimer()
		store, err = Open(ctx, testStore(b))
		if err != nil {
			b.Fatal(err)
		}
		h, _ = collectorHistory(b, store, 0)
		b.StartTimer()
		start = time.Now()
		sent, err := store.PushWhile(ctx, h, func() error { importJobs(b, h, sacctgen.FirstJobID, jobs); return nil }, nil)
		if err != nil || sent < jobs {
			b.Fatalf("sent %d: %v", sent, err)
		}
		b.ReportMetric(jobs/time.Since(start).Seconds(), "jobs/s")
		store.Close()
	}
}
