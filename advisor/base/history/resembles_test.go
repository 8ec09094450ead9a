package history

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

// gromacsLines name GROMACS by its banner, as the catalog's reference
// benchmarks do theirs.
var gromacsLines = slurm.NewOutputWorkloads(slurm.NewOutputWorkload("gromacs_performance", regexp.MustCompile(`:-\) GROMACS - gmx\S* mdrun`)))

// recordScanned records the evidence of a job output holding text, as
// collect scans it with the workloads' lines.
func recordScanned(t *testing.T, s *Store, key, text string) {
	t.Helper()
	ev, err := slurm.ScanOutput(strings.NewReader(text), slurm.ScanOptions{Workloads: gromacsLines})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RecordOutput(context.Background(), "migdev", key, "/o/"+key, int64(len(text)), time.Unix(1, 0), ev); err != nil {
		t.Fatal(err)
	}
}

// resembles is each record's OutputResembles, by job id.
func resembles(t *testing.T, s *Store) string {
	t.Helper()
	recs, err := s.History(context.Background(), HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range recs {
		out[r.JobID] = r.OutputResembles
	}
	return fmt.Sprint(out)
}

// The workload a job's output resembles is kept with its output, and a
// scan again replaces it.
func TestOutputResemblesIsKept(t *testing.T) {
	s := openTemp(t)
	importAs(t, s, "migdev", noClusterDump)
	recordScanned(t, s, "4242", ":-) GROMACS - gmx mdrun, 2023.3 (-:\nPerformance: 118.590 0.202\n")
	recordScanned(t, s, "4243", "epoch 1: loss 0.3\n")
	if got, want := resembles(t, s), "map[4242:gromacs_performance 4243:]"; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	recordScanned(t, s, "4242", "a file written over\n")
	if got, want := resembles(t, s), "map[4242: 4243:]"; got != want {
		t.Errorf("scanned again: %s, want %s", got, want)
	}
}

// A history of the schema before it, that this user cannot migrate, is
// read read-only: no output resembles anything.
func TestReadOnlyReadsTheSchemaBeforeResembles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	w, err := OpenWith(ctx, path, Options{BusyTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	importAs(t, w, "migdev", noClusterDump)
	recordScanned(t, w, "4242", ":-) GROMACS - gmx mdrun, 2023.3 (-:\n")
	if _, err := w.db.Exec(fmt.Sprintf(`ALTER TABLE outputs DROP COLUMN resembles; PRAGMA user_version = %d`, schemaResembles-1)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	ro, err := OpenWith(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if got, want := resembles(t, ro), "map[4242: 4243:]"; got != want {
		t.Errorf("read-only history of schema %d: %s, want %s", schemaResembles-1, got, want)
	}
}
