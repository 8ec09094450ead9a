package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
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

// BenchmarkReadPeers is what the wrapper adds for a job measured on one
// profile: the peers of two indexes (the user's and the site's), full,
// and the job's own left out.
func BenchmarkReadPeers(b *testing.B) {
	var peers []runmodel.DatedPeer
	for i := range runmodel.MaxPeers {
		peers = append(peers, runmodel.DatedPeer{Script: peerKey(fmt.Sprint(i)), At: int64(i),
			Peer: runmodel.Peer{"1g.10gb": 700 + float64(i), "2g.20gb": 360, "3g.40gb": 250, "full": 100}})
	}
	data, err := encodePeers(peers)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	var paths []string
	for _, name := range []string{"own.idx", "site.idx"} {
		path := filepath.Join(dir, name)
		if err := WriteFile(path, map[Key][]byte{peersKey: data}); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, path)
	}
	b.ResetTimer()
	for range b.N {
		own, err := Open(paths[0])
		if err != nil {
			b.Fatal(err)
		}
		site, err := Open(paths[1])
		if err != nil {
			b.Fatal(err)
		}
		set, err := ReadPeers(own, site)
		if err != nil || len(set.Except("0")) != runmodel.MaxPeers-1 {
			b.Fatalf("%d peers, %v", len(set), err)
		}
		own.Close()
		site.Close()
	}
}
