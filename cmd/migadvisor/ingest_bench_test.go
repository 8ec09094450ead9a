package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// ingestBounds are issue 36's: collect at least 1.5 times as fast as
// sqlite3's .import (the median pair), in at most 64 MiB.
const (
	ingestRatioBound  = 1.5
	ingestMemoryBound = 64 // MiB
)

// sqliteImport is the baseline, sqlite3's own import of the dump's raw
// rows into one table (its columns named by the header, every value
// text), in a new database in WAL mode as a history is.
var sqliteImport = []string{"-cmd", "PRAGMA journal_mode=WAL", "{db}", ".mode csv", ".separator |", ".import {dump} jobs"}

// BenchmarkCollectVsSQLiteImport is issue 36's ingestion figure: collect
// --sacct-file of a dump of MIGADVISOR_BENCH_JOBS jobs (default 1M; 2M
// lines: each job and its batch step, as sacct --parsable2 saves them;
// sacctgen's full column set, and the lean one a site's own --format keeps,
// issue 42)
// into a fresh history, against sqliteImport of the same file, as
// processes, in MIGADVISOR_BENCH_PAIRS pairs (default 5), each pair in the
// other order than the last, the page cache holding the dump and the disk
// synced before each run. It reports the ratio of their times (sqlite3's
// over collect's: min, median, max), each side's median, collect's CPU
// (user and system) and peak resident memory, and at 1M jobs and 5 pairs
// or more fails under ingestRatioBound or over ingestMemoryBound.
func BenchmarkCollectVsSQLiteImport(b *testing.B) {
	if testing.Short() {
		b.Skip("imports a 1M-job dump; not in -short")
	}
	sqlite3, err := exec.LookPath("sqlite3")
	if err != nil {
		b.Skip("no sqlite3 on PATH: the baseline is its .import")
	}
	jobs, pairs := sacctgen.BenchJobs(b, 1_000_000), benchEnvInt(b, "MIGADVISOR_BENCH_PAIRS", 5)
	bin := migadvisorBinary(b)
	for _, d := range []struct {
		name string
		dump *sacctgen.Reader
	}{{"dump=full", sacctgen.New(jobs, "|")}, {"dump=lean", sacctgen.NewLean(jobs, "|")}} {
		b.Run(d.name, func(b *testing.B) { collectVsSQLiteImport(b, bin, sqlite3, jobs, pairs, d.dump) })
	}
}

// collectVsSQLiteImport is BenchmarkCollectVsSQLiteImport on one dump.
func collectVsSQLiteImport(b *testing.B, bin, sqlite3 string, jobs, pairs int, reader *sacctgen.Reader) {
	dir := b.TempDir()
	dump := filepath.Join(dir, "sacct.psv")
	sacctgen.WriteJobAndBatch(b, dump, reader)
	collect := func(db string) []string {
		return []string{bin, "--site", "wulver", "--db", db, "collect", "--sacct-file", dump}
	}
	baseline := func(db string) []string {
		args := []string{sqlite3}
		for _, a := range sqliteImport {
			args = append(args, strings.NewReplacer("{db}", db, "{dump}", dump).Replace(a))
		}
		return args
	}
	run := func(args []string, db string) ingestRun {
		r := timeIngest(b, dir, args)
		for _, f := range []string{db, db + "-wal", db + "-shm", strings.TrimSuffix(db, ".db") + ".idx"} {
			os.Remove(f)
		}
		return r
	}
	db := func(name string) string { return filepath.Join(dir, name+".db") }
	// Once each first, unmeasured: the dump in the page cache, and what
	// each one imported checked.
	if out := run(collect(db("history")), db("history")).out; !strings.Contains(out, fmt.Sprintf("%d jobs: %d new", jobs, jobs)) {
		b.Fatalf("collect: %s", out)
	}
	run(baseline(db("sqlite")), db("sqlite"))
	b.ResetTimer()
	var ratios, ours, theirs, cpu, mem []float64
	for i := range b.N * pairs {
		var c, s ingestRun
		if i%2 == 0 {
			s, c = run(baseline(db("sqlite")), db("sqlite")), run(collect(db("history")), db("history"))
		} else {
			c, s = run(collect(db("history")), db("history")), run(baseline(db("sqlite")), db("sqlite"))
		}
		ratios = append(ratios, s.wall/c.wall)
		ours, theirs, cpu, mem = append(ours, c.wall), append(theirs, s.wall), append(cpu, c.cpu), append(mem, c.maxRSSMiB)
	}
	lo, ratio, hi := spread(ratios)
	_, oursMid, _ := spread(ours)
	_, theirsMid, _ := spread(theirs)
	_, cpuMid, _ := spread(cpu)
	_, _, memMax := spread(mem)
	b.ReportMetric(lo, "ratio-min")
	b.ReportMetric(ratio, "ratio-p50")
	b.ReportMetric(hi, "ratio-max")
	b.ReportMetric(oursMid, "collect-p50-s")
	b.ReportMetric(theirsMid, "sqlite3-p50-s")
	b.ReportMetric(cpuMid, "collect-cpu-p50-s")
	b.ReportMetric(memMax, "collect-peak-RSS-MiB")
	b.ReportMetric(0, "ns/op") // an op is the pairs: the metrics say it
	if jobs == 1_000_000 && len(ratios) >= 5 {
		if ratio < ingestRatioBound {
			b.Errorf("collect is %.2f times as fast as sqlite3's .import (median of %d pairs, %.2f-%.2f): the bound is %.1f",
				ratio, len(ratios), lo, hi, ingestRatioBound)
		}
		if memMax > ingestMemoryBound {
			b.Errorf("collect's peak resident memory %.1f MiB: the bound is %d", memMax, ingestMemoryBound)
		}
	}
}

// ingestRun is one run's wall and CPU time (user and system), s, its
// peak resident memory, and its output.
type ingestRun struct {
	wall, cpu, maxRSSMiB float64
	out                  string
}

// timeIngest runs args in dir after syncing the disk (the last run's
// writes are not this one's to wait for), without the environment's
// MIGADVISOR_ settings.
func timeIngest(b *testing.B, dir string, args []string) ingestRun {
	syscall.Sync()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MIGADVISOR_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return ingestRun{wall.Seconds(), cpu.Seconds(), float64(ru.Maxrss) / 1024, string(out)}
}

// benchEnvInt is the positive number the environment variable name holds,
// or def.
func benchEnvInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: a positive number", name, s)
	}
	return n
}
