package sacctgen

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"testing"
)

// BenchJobsEnv names how many jobs a benchmark's generated dump holds.
const BenchJobsEnv = "MIGADVISOR_BENCH_JOBS"

// BenchJobs is how many jobs a benchmark's dump holds: BenchJobsEnv's
// number, or def where it is unset. Anything but a positive number fails
// tb: a benchmark never runs on a size it was not asked for.
func BenchJobs(tb testing.TB, def int) int {
	tb.Helper()
	s := os.Getenv(BenchJobsEnv)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		tb.Fatalf("%s=%q: a positive number of jobs", BenchJobsEnv, s)
	}
	return n
}

// WriteJobAndBatch writes dump, unread, to the file path less its extern
// steps: each job's line and its batch step's, as issue 36's dump of 1M
// jobs (a saved sacct --parsable2, with "|") has them. An error fails tb.
func WriteJobAndBatch(tb testing.TB, path string, dump *Reader) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	delim := []byte(dump.delim)
	lines := bufio.NewScanner(dump)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	for lines.Scan() {
		line := lines.Bytes()
		if id, _, _ := bytes.Cut(line, delim); bytes.HasSuffix(id, []byte(".extern")) {
			continue
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	if err := lines.Err(); err != nil {
		tb.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}
