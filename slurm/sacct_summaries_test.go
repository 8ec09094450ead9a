package slurm_test

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// summariesDump is a dump of n jobs whose GPU jobs carry jobstats summaries,
// with a site's own note on one job in 50 and a broken summary on one in
// 70, and each job's AdminComment by its key.
func summariesDump(t *testing.T, n int) (string, map[string]string) {
	t.Helper()
	gen := sacctgen.New(n, "|")
	gen.Jobstats = true
	data, err := io.ReadAll(gen)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	admin := slices.Index(slurm.SacctFields, "AdminComment")
	comments := map[string]string{}
	for i, line := range lines[1:] {
		f := strings.Split(line, "|")
		if len(f) < len(slurm.SacctFields) || strings.Contains(f[0], ".") {
			continue
		}
		switch {
		case i%50 == 0:
			f[admin] = "site note " + f[0]
		case i%70 == 0 && f[admin] != "":
			f[admin] = "JS1:!!!"
		}
		comments[f[0]] = f[admin]
		lines[i+1] = strings.Join(f, "|")
	}
	return strings.Join(lines, "\n"), comments
}

// The summaries are decoded ahead of the reading, in chunks beside it: each
// job still comes in input order, and with what DecodeJobstats makes of its
// AdminComment alone (a note that is not a summary is none), across
// chunks, in a last chunk cut short, and past jobs with none.
func TestSacctReaderDecodesSummariesAhead(t *testing.T) {
	for _, n := range []int{1, 7, 128, 1000} {
		dump, comments := summariesDump(t, n)
		r, err := slurm.NewSacctReader(strings.NewReader(dump))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			j, err := r.Next()
			if errors.Is(err, io.EOF) {
				if i != n {
					t.Errorf("%d jobs: %d read", n, i)
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprint(sacctgen.FirstJobID + i); j.Key != want {
				t.Fatalf("%d jobs: job %s where %s comes", n, j.Key, want)
			}
			js, jsErr := slurm.DecodeJobstats(comments[j.Key])
			if errors.Is(jsErr, slurm.ErrNotJobstats) {
				js, jsErr = nil, nil
			}
			if !reflect.DeepEqual(j.Jobstats, js) || fmt.Sprint(j.JobstatsErr) != fmt.Sprint(jsErr) {
				t.Errorf("%d jobs: job %s: %+v %v, want %+v %v", n, j.Key, j.Jobstats, j.JobstatsErr, js, jsErr)
			}
		}
	}
}

// failingReader gives its data, then err.
type failingReader struct {
	data io.Reader
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	n, err := r.data.Read(p)
	if err == io.EOF {
		return n, r.err
	}
	return n, err
}

// A read that fails while jobs are read ahead: the jobs read whole before
// it come first, in order, then the error. Job 199, whose records end only
// where job 200's begin, is not known whole.
func TestSacctReaderReturnsTheJobsReadAheadBeforeAnError(t *testing.T) {
	dump, _ := summariesDump(t, 300)
	cut := strings.Index(dump, fmt.Sprintf("\n%d|", sacctgen.FirstJobID+200)) + 30 // inside job 200's line
	broken := errors.New("sacct: connection lost")
	r, err := slurm.NewSacctReader(&failingReader{strings.NewReader(dump[:cut]), broken})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		j, err := r.Next()
		if err != nil {
			if !errors.Is(err, broken) || i != 199 {
				t.Fatalf("after %d jobs: %v, want the read's error after 199", i, err)
			}
			break
		}
		if want := fmt.Sprint(sacctgen.FirstJobID + i); j.Key != want {
			t.Fatalf("job %s where %s comes", j.Key, want)
		}
	}
	if _, err := r.Next(); !errors.Is(err, broken) {
		t.Errorf("called again: %v", err)
	}
}
