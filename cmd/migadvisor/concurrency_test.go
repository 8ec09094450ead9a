package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// writeDump writes a sacct dump of n jobs numbered from first.
func writeDump(t testing.TB, path string, first, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, sacctgen.NewFrom(first, n, "|")); err != nil {
		t.Fatal(err)
	}
}

// process is one migadvisor run of a concurrency test.
type process struct {
	args           []string
	stdout, stderr bytes.Buffer
	err            error
}

// TestConcurrentProcessesShareOneHistory starts 24 migadvisor processes at
// once on a history that does not exist yet: imports of overlapping dumps,
// sbatch wrappers, recommend and history. None may fail or show a locked
// database, and the history ends with every job and every submission, once.
func TestConcurrentProcessesShareOneHistory(t *testing.T) {
	isolate(t)
	bin := migadvisorBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "state", "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	sbatch := newFakeSbatch(t, "") // job ids: its process ids
	t.Setenv("MIGADVISOR_SBATCH", sbatch.Path)
	script := wrapperScript(t)

	const ranges, perRange = 4, 20_000
	var procs []*process
	for i := range 2 * ranges { // each range imported twice, by two processes at once
		dump := filepath.Join(dir, fmt.Sprintf("dump%d.psv", i))
		writeDump(t, dump, sacctgen.FirstJobID+(i%ranges)*perRange, perRange)
		procs = append(procs, &process{args: []string{"collect", "--sacct-file", dump, "--cluster", "wulver", "--json"}})
	}
	for range 8 {
		procs = append(procs, &process{args: []string{"sbatch", script}})
	}
	for range 6 {
		procs = append(procs, &process{args: []string{"recommend", script, "--json"}})
	}
	for range 2 {
		procs = append(procs, &process{args: []string{"history", "--json"}})
	}
	runTogether(t, bin, "", procs)

	submitted := 0
	for _, p := range procs {
		if p.args[0] == "sbatch" && strings.HasPrefix(p.stdout.String(), "Submitted batch job ") {
			submitted++
		}
	}
	calls := sbatch.take(t)
	if submitted != 8 || len(calls) != 8 {
		t.Errorf("%d wrappers reached sbatch, which ran %d times; want 8", submitted, len(calls))
	}
	for _, c := range calls {
		if !slices.Equal(c.Args, []string{script}) {
			t.Errorf("sbatch got %q, want the user's arguments", c.Args)
		}
	}
	if got := len(trackedJobs(t, db)); got != 8 { // opening the history moves the spool in
		t.Errorf("%d submissions in the history, want 8", got)
	}
	assertJobs(t, db, ranges*perRange)
}

// runTogether starts every process at once (in dir, "" for this one's)
// and waits for all; each must succeed without a word of a locked or busy
// database.
func runTogether(t *testing.T, bin, dir string, procs []*process) {
	t.Helper()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, p.args...)
			cmd.Dir = dir
			cmd.Stdout, cmd.Stderr = &p.stdout, &p.stderr
			<-start
			p.err = cmd.Run()
		}()
	}
	close(start)
	wg.Wait()
	for _, p := range procs {
		errText := p.stderr.String()
		if p.err != nil || strings.Contains(errText, "locked") || strings.Contains(errText, "busy") {
			t.Errorf("migadvisor %s: %v\nstdout: %s\nstderr: %s", strings.Join(p.args, " "), p.err, p.stdout.String(), errText)
		}
	}
}

// assertJobs checks that the history holds want distinct jobs and is sound.
func assertJobs(t *testing.T, db string, want int) {
	t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n, distinct int
	var check string
	if err := conn.QueryRow("SELECT count(*), count(DISTINCT job_key) FROM jobs").Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil {
		t.Fatal(err)
	}
	if n != want || distinct != want || check != "ok" {
		t.Errorf("%d jobs (%d distinct), want %d; integrity_check: %s", n, distinct, want, check)
	}
}
