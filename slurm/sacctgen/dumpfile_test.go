package sacctgen_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// The file is the dump less its extern steps, with either delimiter: the
// header, then each job's line and its batch step's.
func TestWriteJobAndBatch(t *testing.T) {
	for _, delim := range []string{"|", slurm.SacctDelimiter} {
		path := filepath.Join(t.TempDir(), "sacct.psv")
		sacctgen.WriteJobAndBatch(t, path, sacctgen.New(50, delim))
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		for _, line := range strings.SplitAfter(string(sacctgen.Bytes(50, delim)), "\n") {
			if id, _, _ := strings.Cut(line, delim); !strings.HasSuffix(id, ".extern") {
				want.WriteString(line)
			}
		}
		if string(got) != want.String() || strings.Count(string(got), "\n") != 1+2*50 {
			t.Errorf("delimiter %q: %d lines, want the dump's %d less its extern steps, 1+2×50",
				delim, strings.Count(string(got), "\n"), strings.Count(want.String(), "\n"))
		}
	}
}

// The size is the environment's, or the default; anything else fails the
// benchmark rather than run it at another size.
func TestBenchJobs(t *testing.T) {
	for _, c := range []struct {
		env     string
		want    int
		refused bool
	}{{"", 1_000_000, false}, {"20000", 20_000, false}, {"2e6", 0, true}, {"0", 0, true}, {"-5", 0, true}, {"lots", 0, true}} {
		t.Setenv(sacctgen.BenchJobsEnv, c.env)
		tb := &fatalTB{TB: t}
		var got int
		done := make(chan struct{})
		go func() { // Fatalf ends the goroutine, as it ends a benchmark's
			defer close(done)
			got = sacctgen.BenchJobs(tb, 1_000_000)
		}()
		<-done
		if tb.failed != c.refused || !c.refused && got != c.want {
			t.Errorf("%s=%q: %d (failed: %v %q), want %d (failed: %v)", sacctgen.BenchJobsEnv, c.env, got, tb.failed, tb.msg, c.want, c.refused)
		}
	}
}

// fatalTB records a Fatalf and ends its goroutine, as testing's does.
type fatalTB struct {
	testing.TB
	failed bool
	msg    string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.failed, f.msg = true, format
	runtime.Goexit()
}
