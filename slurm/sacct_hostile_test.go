package slurm_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// A dump whose every other job line was cut short (a sacct killed while it
// wrote, a copy interrupted): the whole records read exactly as in the
// intact dump, each cut one is skipped with its line, and the reader keeps
// the first slurm.MaxSkippedKept of them while it counts them all.
func TestSacctTruncatedLines(t *testing.T) {
	const jobs = 3000
	intact := readJobs(t, sacctgen.Bytes(jobs, "|"))
	var cut bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(sacctgen.Bytes(jobs, "|")))
	var cutLines []int
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		job := (n - 2) / 3 // line 1 is the header; then a job line and its two steps
		if n > 1 && (n-2)%3 == 0 && job%2 == 0 {
			line = line[:len(line)/2]
			cutLines = append(cutLines, n)
		}
		cut.WriteString(line + "\n")
	}
	r, err := slurm.NewSacctReader(&cut)
	if err != nil {
		t.Fatal(err)
	}
	whole := 0
	for {
		j, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		want := intact[j.Key]
		if !j.HasJobLine {
			if j.Steps != want.Steps || j.MaxRSSMiB != want.MaxRSSMiB {
				t.Fatalf("job %s without its cut line: steps %d, max RSS %v; want %d, %v", j.Key, j.Steps, j.MaxRSSMiB, want.Steps, want.MaxRSSMiB)
			}
			continue
		}
		whole++
		if *j != *want {
			t.Fatalf("job %s reads differently beside cut lines:\n%+v\n%+v", j.Key, j, want)
		}
	}
	if whole != jobs/2 || r.SkippedTotal != len(cutLines) || len(r.Skipped) != slurm.MaxSkippedKept {
		t.Fatalf("%d whole jobs, %d skipped (%d kept); want %d, %d, %d", whole, r.SkippedTotal, len(r.Skipped), jobs/2, len(cutLines), slurm.MaxSkippedKept)
	}
	for i, s := range r.Skipped {
		if s.Line != cutLines[i] || !strings.Contains(s.Err.Error(), "truncated") {
			t.Fatalf("skipped %d: %v, want line %d", i, s, cutLines[i])
		}
	}
}

func readJobs(t *testing.T, data []byte) map[string]*slurm.AcctJob {
	t.Helper()
	r, err := slurm.NewSacctReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*slurm.AcctJob{}
	for {
		j, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[j.Key] = j
	}
}

// A record longer than the reader's buffer (a 300 kB job name of quotes,
// $(), backticks and unicode) reads back whole, and the next one too.
func TestSacctVeryLongLine(t *testing.T) {
	name := strings.Repeat(`it's "x" $(y) `+"`z`"+` ☃ `, 300_000/20)
	dump := "JobIDRaw|JobID|State|JobName\n1|1|COMPLETED|" + name + "\n2|2|FAILED|short\n"
	jobs := readJobs(t, []byte(dump))
	if len(jobs) != 2 || jobs["1"].Name != name || jobs["2"].Name != "short" || jobs["2"].State != "FAILED" {
		t.Fatalf("%d jobs; the long name read back %v", len(jobs), jobs["1"] != nil && jobs["1"].Name == name)
	}
}
