//go:build mariadb

package mariadb

import (
	"context"
	"testing"
	"time"
)

// BenchmarkMariaDBCollect is `collect --all-users` into a site store: a
// 200k-job dump imported into the collector's history with its outbox on,
// then pushed to the dev cluster's MariaDB. It reports jobs/s for the
// whole (the target is 50k) and for the push alone.
func BenchmarkMariaDBCollect(b *testing.B) {
	const jobs = 200_000
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		store, err := Open(ctx, testStore(b))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		h, _ := collectorHistory(b, store, jobs)
		imported := time.Now()
		if _, err := store.Push(ctx, h, nil); err != nil {
			b.Fatal(err)
		}
		pushed := time.Since(imported)
		b.ReportMetric(jobs/time.Since(start).Seconds(), "jobs/s")
		b.ReportMetric(jobs/pushed.Seconds(), "push-jobs/s")
		store.Close()
	}
}
