//go:build mariadb

package mariadb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// The store that BenchmarkMariaDBCollectInto1M collects into: built once
// in the dev cluster's MariaDB and kept there for the next runs, each of
// which removes the jobs it added.
const (
	store1MDatabase = "migadvisor_test_store_1m" // the dev cluster grants its user migadvisor_test*
	store1MJobs     = 1_000_000
	// incrementalJobs is what one collect brings: jobs newer than the
	// store's, numbered from FirstJobID+store1MJobs (keys "2000000" and up:
	// above every key of the store's, as strings too).
	incrementalJobs = 10_000
	// The bounds (medians of the pairs; docs/performance.md): the least
	// speed of the incremental collect into the store of 1M jobs, about half
	// of the development machine's, and the most that those 1M jobs may make
	// it take, as a multiple of the same collect into an empty store.
	collectInto1MJobsPerS = 15_000
	collectInto1MBound    = 2.0
)

// BenchmarkMariaDBCollectInto1M is an incremental `collect --all-users` with
// a site store that already holds 1M jobs, as a site's does after months:
// 10,000 new jobs imported into the collector's history (a fresh one) while
// they are pushed to the store (PushWhile), against the same collect into an
// empty store, in pairs whose order alternates (ABBA). It reports
// min / median / max of each side's jobs/s and of the pairs' ratio, and
// fails where the collect into 1M jobs is slower than collectInto1MJobsPerS
// or the store's 1M jobs make it take more than collectInto1MBound times as
// long (medians of the pairs). The 1M-job store
// is built on the first run (a minute or two) and kept (database
// migadvisor_test_store_1m; drop it to build it again).
// $MIGADVISOR_BENCH_PAIRS pairs (default 8); run it with -benchtime 1x.
func BenchmarkMariaDBCollectInto1M(b *testing.B) {
	full := storeOf1MJobs(b)
	var intoFull, intoEmpty, ratios []float64
	for i := range b.N * benchPairs(b) {
		var f, e time.Duration
		if i%2 == 0 {
			f, e = collectIncrement(b, full, true), collectIncrement(b, testStore(b), false)
		} else {
			e, f = collectIncrement(b, testStore(b), false), collectIncrement(b, full, true)
		}
		intoFull, intoEmpty = append(intoFull, incrementalJobs/f.Seconds()), append(intoEmpty, incrementalJobs/e.Seconds())
		ratios = append(ratios, f.Seconds()/e.Seconds())
	}
	slices.Sort(intoFull)
	slices.Sort(intoEmpty)
	slices.Sort(ratios)
	median := func(xs []float64) float64 { return xs[(len(xs)-1)/2] }
	b.ReportMetric(median(intoFull), "into-1M-jobs/s")
	b.ReportMetric(intoFull[0], "into-1M-min-jobs/s")
	b.ReportMetric(intoFull[len(intoFull)-1], "into-1M-max-jobs/s")
	b.ReportMetric(median(intoEmpty), "into-empty-jobs/s")
	b.ReportMetric(intoEmpty[0], "into-empty-min-jobs/s")
	b.ReportMetric(intoEmpty[len(intoEmpty)-1], "into-empty-max-jobs/s")
	b.ReportMetric(median(ratios), "time-ratio-p50")
	b.ReportMetric(ratios[0], "time-ratio-min")
	b.ReportMetric(ratios[len(ratios)-1], "time-ratio-max")
	b.ReportMetric(0, "ns/op") // each op is the pairs; the metrics say it
	if v := median(intoFull); v < collectInto1MJobsPerS {
		b.Errorf("a collect of %d jobs into a store of 1M sends %.0f jobs/s (median of %d pairs: %.0f-%.0f), under %d",
			incrementalJobs, v, len(intoFull), intoFull[0], intoFull[len(intoFull)-1], collectInto1MJobsPerS)
	}
	if r := median(ratios); r > collectInto1MBound {
		b.Errorf("a collect of %d jobs into a store of 1M takes %.2f times as long as into an empty one (median of %d pairs: %.2f-%.2f), over %.1f",
			incrementalJobs, r, len(ratios), ratios[0], ratios[len(ratios)-1], collectInto1MBound)
	}
}

// collectIncrement is one incremental collect into the store of opt: the
// jobs after the 1M of storeOf1MJobs into a fresh collector's history,
// pushed while they are imported, and its time. From a kept store
// (removeAfter) those jobs are then removed, leaving it as it was.
func collectIncrement(b *testing.B, opt Options, removeAfter bool) time.Duration {
	b.Helper()
	ctx := context.Background()
	store, err := Open(ctx, opt)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	h, _ := collectorHistory(b, store, 0)
	start := time.Now()
	sent, err := store.PushWhile(ctx, h, func() error {
		importJobs(b, h, sacctgen.FirstJobID+store1MJobs, incrementalJobs)
		return nil
	}, nil)
	d := time.Since(start)
	if err != nil || sent < incrementalJobs {
		b.Fatalf("sent %d: %v", sent, err)
	}
	if removeAfter {
		removeIncrement(b, store)
	}
	return d
}

// removeIncrement removes the jobs collectIncrement added from a kept
// store, and checks that it holds its 1M jobs again.
func removeIncrement(b *testing.B, store *Store) {
	b.Helper()
	first := strconv.Itoa(sacctgen.FirstJobID + store1MJobs)
	if _, err := store.DB().Exec("DELETE FROM jobs WHERE job_key >= ?", first); err != nil {
		b.Fatal(err)
	}
	if n := storeJobs(b, store); n != store1MJobs {
		b.Fatalf("the kept store holds %d jobs after the increment was removed, not %d: drop database %s", n, store1MJobs, store1MDatabase)
	}
}

// storeOf1MJobs is the options of the kept store of 1M jobs, built first
// where it is missing or holds another number of jobs (a run cut short).
func storeOf1MJobs(b *testing.B) Options {
	b.Helper()
	ctx := context.Background()
	opt := devStoreOptions(b)
	admin, err := Connect(opt) // to the option file's database, which the dev cluster made
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE DATABASE IF NOT EXISTS " + store1MDatabase); err != nil {
		b.Fatal(err)
	}
	opt.Database = store1MDatabase
	store, err := Open(ctx, opt) // migrated to this build's schema
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	switch n := storeJobs(b, store); n {
	case store1MJobs:
		return opt
	case 0:
	default:
		b.Fatalf("database %s holds %d jobs, not %d: drop it to build it again", store1MDatabase, n, store1MJobs)
	}
	fmt.Fprintf(os.Stderr, "building the 1M-job store %s (once)...\n", store1MDatabase)
	start := time.Now()
	h, _ := collectorHistory(b, store, store1MJobs)
	if sent, err := store.Push(ctx, h, nil); err != nil || sent < store1MJobs {
		b.Fatalf("pushed %d: %v", sent, err)
	}
	fmt.Fprintf(os.Stderr, "built in %.0f s\n", time.Since(start).Seconds())
	if n := storeJobs(b, store); n != store1MJobs {
		b.Fatalf("the store built holds %d jobs, not %d", n, store1MJobs)
	}
	return opt
}

// devStoreOptions are the options of the dev cluster's option file, as
// testStore reads it, without a database of their own.
func devStoreOptions(b *testing.B) Options {
	b.Helper()
	file := devOptionFile
	if dir := os.Getenv("DEV_CLUSTER_STATE"); dir != "" {
		file = filepath.Join(dir, "migadvisor-site-store.cnf")
	}
	opt, err := ReadOptionFile(file)
	if err != nil {
		b.Fatalf("the dev cluster's site store (scripts/dev-cluster.sh up makes it): %v", err)
	}
	return opt
}

func storeJobs(b *testing.B, store *Store) int {
	b.Helper()
	var n int
	if err := store.DB().QueryRow("SELECT COUNT(*) FROM jobs").Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
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
