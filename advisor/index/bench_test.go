package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/advisor/history/historytest"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/sacctgen"
	"github.com/migadvisor/migadvisor/slurm"
)

// benchHistory is a 1M-job history whose jobs are all linked to 50,000
// scripts (20 jobs each): a site whose collect has linked every job
// through slurmdbd's stored scripts, the index's worst case.
func benchHistory(b *testing.B) *history.Store {
	b.Helper()
	ctx := context.Background()
	site, _ := catalog.Builtin("wulver")
	st := historytest.FromReader(b, site, sacctgen.New(1_000_000, slurm.SacctDelimiter), "wulver")
	var subs []history.Submission
	for i := range 1_000_000 {
		subs = append(subs, history.Submission{Cluster: "wulver", JobID: fmt.Sprint(1_000_000 + i),
			Fingerprint: fmt.Sprintf("fp%05d", i%50_000), Source: "sacct:x", Script: "sacct:x", Submitted: time.Unix(1_790_000_000, 0)})
		if len(subs) == 50_000 {
			if err := st.RecordSubmissions(ctx, subs); err != nil {
				b.Fatal(err)
			}
			subs = subs[:0]
		}
	}
	return st
}

// BenchmarkPublish1MJobs publishes a 1M-job history: its snapshot and its
// index.
func BenchmarkPublish1MJobs(b *testing.B) {
	st := benchHistory(b)
	dir := b.TempDir()
	b.ResetTimer()
	for range b.N {
		pub, err := Publish(context.Background(), st, dir)
		if err != nil {
			b.Fatal(err)
		}
		if pub.Scripts == 0 {
			b.Fatalf("%+v", pub)
		}
	}
	b.StopTimer()
	info, _ := os.Stat(filepath.Join(dir, IndexName))
	b.ReportMetric(float64(info.Size())/(1<<20), "index-MiB")
}

// BenchmarkLookup is what a reader does per submission: open the 1M-job
// history's index and read one script's runs.
func BenchmarkLookup(b *testing.B) {
	st := benchHistory(b)
	dir := b.TempDir()
	if _, err := Publish(context.Background(), st, dir); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, IndexName)
	found := 0
	b.ResetTimer()
	for i := range b.N {
		r, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		runs, err := r.Runs(fmt.Sprintf("fp%05d", i%50_000)) // a fifth have no GPU run: not in the index
		if err != nil {
			b.Fatal(err)
		}
		if len(runs) > 0 {
			found++
		}
		r.Close()
	}
	if b.N >= 100 && found < b.N/2 {
		b.Fatalf("%d of %d scripts found", found, b.N)
	}
}
