package collect

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/index"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// BenchmarkCollectSteps is what each step of collect --sacct-file costs
// into a fresh history (issue 36), on a dump of MIGADVISOR_BENCH_JOBS jobs
// (default 1M; each job's line and its batch step's), in its order, wall
// seconds: the accounting import (import-s: reading and writing, the
// index of names built after, ImportStages in advisor/history itemizes
// it); the links (links-s: jobs filed under a fallback cluster name, the
// wrapper's submissions linked to their jobs); the scan of job outputs
// (outputs-s: the tracked jobs' and the user's recent sessions'); and the
// refresh of the user's advice index the command makes after (refresh-s).
func BenchmarkCollectSteps(b *testing.B) {
	if testing.Short() {
		b.Skip("imports a 1M-job dump; not in -short")
	}
	jobs := 1_000_000
	if s := os.Getenv("MIGADVISOR_BENCH_JOBS"); s != "" {
		var err error
		if jobs, err = strconv.Atoi(s); err != nil || jobs < 1 {
			b.Fatalf("MIGADVISOR_BENCH_JOBS=%q: a number of jobs", s)
		}
	}
	dump := filepath.Join(b.TempDir(), "sacct.psv")
	writeJobAndBatchDump(b, dump, jobs)
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

// writeJobAndBatchDump writes a dump of n generated jobs with "|" (as a
// saved sacct --parsable2 is), each job's line and its batch step's:
// sacctgen's extern steps left out.
func writeJobAndBatchDump(b *testing.B, path string, n int) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	lines := bufio.NewScanner(sacctgen.New(n, "|"))
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	for lines.Scan() {
		line := lines.Bytes()
		if id, _, _ := bytes.Cut(line, []byte("|")); bytes.HasSuffix(id, []byte(".extern")) {
			continue
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	if err := lines.Err(); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}
