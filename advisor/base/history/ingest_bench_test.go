//go:build linux

package history

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// BenchmarkImportStages is what each stage of an import costs (issue 36),
// on a dump of MIGADVISOR_BENCH_JOBS jobs (default 1M; each job's line and
// its batch step's) into a fresh history, each the least of 3 rounds, in
// seconds of CPU per 1M jobs. The reader's goroutine parses the dump
// (parse) and turns each job into its row (classify); jobstats summaries
// are decoded beside it (jobstats: the CPU a dump with summaries on its
// GPU jobs adds); the writer binds and steps the rows (write: its
// thread's CPU), keeps the jobs' indexes up row by row (indexes: what
// they add to it) and then builds the index of names (name-index); with
// the outbox on (a history sent to a site store) the triggers note each
// job (outbox). import-s is the wall time of the whole import, reading and
// writing on two cores.
func BenchmarkImportStages(b *testing.B) {
	if testing.Short() {
		b.Skip("imports 1M-job dumps; not in -short")
	}
	jobs := sacctgen.BenchJobs(b, 1_000_000)
	dir := b.TempDir()
	plain, summaries := filepath.Join(dir, "plain.psv"), filepath.Join(dir, "jobstats.psv")
	sacctgen.WriteJobAndBatch(b, plain, sacctgen.New(jobs, "|"))
	gen := sacctgen.New(jobs, "|")
	gen.Jobstats = true
	sacctgen.WriteJobAndBatch(b, summaries, gen)
	opt := ImportOptions{Profile: func(t string, n int) string { return profiles[t] }}
	per := 1e6 / float64(jobs)
	least := func(measure func() float64) float64 {
		best := measure()
		for range 2 {
			best = min(best, measure())
		}
		return best * per
	}
	for range b.N {
		parse := least(func() float64 { return readDump(b, plain, nil).cpu })
		rows := least(func() float64 { return readDump(b, plain, &opt).cpu })
		withSummaries := least(func() float64 { return readDump(b, summaries, &opt).cpu })
		wall := math.Inf(1)
		write := least(func() float64 {
			st := importStage(b, plain, opt, nil)
			wall = min(wall, st.wall)
			return st.writer - st.nameIndex
		})
		nameIndex := least(func() float64 { return importStage(b, plain, opt, nil).nameIndex })
		unindexed := least(func() float64 {
			st := importStage(b, plain, opt, func(s *Store) error {
				_, err := s.db.Exec(`DROP INDEX jobs_by_array_job; DROP INDEX jobs_unsettled; DROP INDEX jobs_by_gpu_type`)
				return err
			})
			return st.writer - st.nameIndex
		})
		outbox := least(func() float64 {
			st := importStage(b, plain, opt, func(s *Store) error {
				_, err := s.KeepOutbox(context.Background(), "bench")
				return err
			})
			return st.writer - st.nameIndex
		})
		b.ReportMetric(parse, "parse-s")
		b.ReportMetric(rows-parse, "classify-s")
		b.ReportMetric(withSummaries-rows, "jobstats-s")
		b.ReportMetric(write, "write-s")
		b.ReportMetric(write-unindexed, "indexes-s")
		b.ReportMetric(nameIndex, "name-index-s")
		b.ReportMetric(outbox-write, "outbox-s")
		b.ReportMetric(wall*per, "import-s")
		b.ReportMetric(0, "ns/op") // the stages say it
	}
}

// stageTimes are one import's: its wall time, its writer's CPU (the
// calling goroutine's thread: the writes, and the index of names after),
// and the CPU of building that index, s.
type stageTimes struct{ wall, writer, nameIndex float64 }

// importStage imports the dump into a fresh history, prepared first by
// prepare when not nil.
func importStage(b *testing.B, dump string, opt ImportOptions, prepare func(*Store) error) stageTimes {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "history.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if prepare != nil {
		if err := prepare(s); err != nil {
			b.Fatal(err)
		}
	}
	in, err := os.Open(dump)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	r, err := slurm.NewSacctReader(in)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC() // the last stage's garbage is not this one's
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	thread0, start := threadCPU(), time.Now()
	if _, err := s.ImportJobs(ctx, r.Next, opt); err != nil {
		b.Fatal(err)
	}
	st := stageTimes{wall: time.Since(start).Seconds(), writer: threadCPU() - thread0}
	// The index of names again, as the import built it at its end.
	if _, err := s.db.Exec(`DROP INDEX jobs_by_name`); err != nil {
		b.Fatal(err)
	}
	thread0 = threadCPU()
	if _, err := s.db.Exec(createNameIndex); err != nil {
		b.Fatal(err)
	}
	st.nameIndex = threadCPU() - thread0
	return st
}

// readStage is what reading a dump cost: its jobs, and the process's CPU
// (the reader, and the goroutines that decode summaries beside it), s.
type readStage struct {
	jobs int
	cpu  float64
}

// readDump reads the dump's jobs, and with opt turns each into its row
// as the import's reader does.
func readDump(b *testing.B, dump string, opt *ImportOptions) readStage {
	in, err := os.Open(dump)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	runtime.GC()
	cpu0 := processCPU()
	r, err := slurm.NewSacctReader(in)
	if err != nil {
		b.Fatal(err)
	}
	var rows rowBatch
	n := 0
	for ; ; n++ {
		j, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		if opt != nil {
			if len(rows.jobs) == 5000 {
				rows.reset()
			}
			rows.add(j, *opt)
		}
	}
	return readStage{n, processCPU() - cpu0}
}

// rusageThread is Linux's RUSAGE_THREAD: the calling thread's usage.
const rusageThread = 1

// threadCPU is the CPU time (user and system) of the calling thread, s.
func threadCPU() float64 { return rusageCPU(rusageThread) }

// processCPU is the CPU time of the process, s.
func processCPU() float64 { return rusageCPU(syscall.RUSAGE_SELF) }

func rusageCPU(who int) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime)).Seconds()
}
