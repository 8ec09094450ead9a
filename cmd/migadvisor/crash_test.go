package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// TestKilledImportKeepsCommittedBatches kills `collect` with SIGKILL at
// moments spread over an import of 150,000 jobs (shares of the time a whole
// one takes), the first while it creates the history. Each collect starts
// the import again, so the later kills fall after more commits. After each kill the history opens, passes integrity_check
// and holds whole batches (the dump's first jobs, a multiple of 5,000);
// a last collect completes it with every job once.
func TestKilledImportKeepsCommittedBatches(t *testing.T) {
	isolate(t)
	bin := migadvisorBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	dump := filepath.Join(dir, "dump.psv")
	const jobs, batch = 150_000, 5000
	writeDump(t, dump, sacctgen.FirstJobID, jobs)
	collectInto := func(db string) *exec.Cmd {
		return exec.Command(bin, "--db", db, "collect", "--sacct-file", dump, "--cluster", "wulver", "--json")
	}
	collectCmd := func() *exec.Cmd { return collectInto(db) }
	// How long a whole import takes here sets the moments of the kills.
	began := time.Now()
	if out, err := collectInto(filepath.Join(dir, "timing.db")).CombinedOutput(); err != nil {
		t.Fatalf("collect: %v\n%s", err, out)
	}
	whole := time.Since(began)
	kept, kills := 0, 0
	for _, share := range []float64{0.001, 0.02, 0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 0.97} {
		delay := time.Duration(share * float64(whole))
		cmd := collectCmd()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Logf("collect finished within %v (%v): no more kills", delay, err)
			kept = committedJobs(t, db)
			break
		}
		kills++
		n := committedJobs(t, db)
		t.Logf("killed after %v: %d jobs kept", delay, n)
		if n%batch != 0 || n < kept {
			t.Fatalf("killed after %v: %d jobs kept (before: %d), not whole batches of %d", delay, n, kept, batch)
		}
		kept = n
	}
	if kills < 3 {
		t.Fatalf("only %d kills, %d jobs kept: the import was too quick to test", kills, kept)
	}
	out, err := collectCmd().Output()
	if err != nil {
		t.Fatalf("collect after the kills: %v", err)
	}
	var rep collect.Summary
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.New != jobs-kept || rep.Unchanged != kept {
		t.Errorf("the last collect: %d new, %d unchanged; want %d and %d", rep.New, rep.Unchanged, jobs-kept, kept)
	}
	assertJobs(t, db, jobs)
}

// committedJobs opens a history left by a killed process and checks that
// it is sound and holds a prefix of the dump's jobs; it returns how many.
func committedJobs(t *testing.T, db string) int {
	t.Helper()
	st, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatalf("the history does not open: %v", err)
	}
	st.Close()
	conn, err := sql.Open("sqlite3", "file:"+db+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var check string
	if err := conn.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	var n, lo, hi int
	err = conn.QueryRow(`SELECT count(*), coalesce(min(CAST(job_key AS INTEGER)), 0), coalesce(max(CAST(job_key AS INTEGER)), -1) FROM jobs`).Scan(&n, &lo, &hi)
	if err != nil {
		t.Fatalf("count jobs: %v", err)
	}
	if n > 0 && (lo != sacctgen.FirstJobID || hi-lo+1 != n) {
		t.Fatalf("%d jobs, ids %d to %d: not the dump's first %d", n, lo, hi, n)
	}
	return n
}

// TestKilledIncrementalCollectKeepsTheWatermark: a site-wide collect killed
// while it imports leaves the watermark where the last complete one put
// it, so the next collect reads the same stretch again.
func TestKilledIncrementalCollectKeepsTheWatermark(t *testing.T) {
	isolate(t)
	dump := filepath.Join(t.TempDir(), "dump.psv")
	writeDump(t, dump, sacctgen.FirstJobID, 60_000)
	db := filepath.Join(t.TempDir(), "site.db")
	collectCmd := func(args ...string) *exec.Cmd {
		return sacctDumpProcess(t, dump, append([]string{"--db", db, "collect", "--all-users", "--scripts=false", "--overlap", "0s",
			"--cluster", "wulver", "--json"}, args...)...)
	}
	window := func(cmd *exec.Cmd) *collect.Window {
		t.Helper()
		out, err := cmd.Output()
		var rep collect.Summary
		if err != nil || json.Unmarshal(out, &rep) != nil || rep.Window == nil {
			t.Fatalf("collect: %v\n%s", err, out)
		}
		return rep.Window
	}
	began := time.Now()
	first := window(collectCmd("--since", "2026-01-01"))
	whole := time.Since(began)
	time.Sleep(1100 * time.Millisecond) // a later watermark would be a later second
	killed := collectCmd()
	stalled := filepath.Join(t.TempDir(), "stalled")
	killed.Env = append(killed.Env, sacctStallEnv+"="+stalled) // sacct stops halfway and waits
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(whole + time.Minute); !fileExists(stalled); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("sacct never reached half of the dump")
		}
	}
	time.Sleep(whole / 4) // the collect files what it read meanwhile
	killed.Process.Signal(syscall.SIGKILL)
	killed.Wait()
	if ws, ok := killed.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("collect finished before the kill")
	}
	next := window(collectCmd())
	if !next.FromWatermark || !next.Since.Equal(first.Watermark) {
		t.Errorf("after the kill, collect started at %v (from the watermark: %v), want %v", next.Since, next.FromWatermark, first.Watermark)
	}
	assertJobs(t, db, 60_000)
}

// sacctDumpEnv is the dump that sacct answers in a sacctDumpProcess;
// with sacctStallEnv, sacct prints half of it, creates that file and
// prints nothing more, as a collect is killed mid-stream.
const (
	sacctDumpEnv  = "MIGADVISOR_TEST_SACCT_DUMP"
	sacctStallEnv = "MIGADVISOR_TEST_SACCT_STALL"
)

// sacctDumpProcess is the CLI in a process of its own, to kill: this test
// binary running TestHelperSacctDumpProcess, where sacct answers dump
// (its header alone when asked for --jobs).
func sacctDumpProcess(t *testing.T, dump string, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, append([]string{"-test.run=^TestHelperSacctDumpProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), sacctDumpEnv+"="+dump)
	return cmd
}

// TestHelperSacctDumpProcess is no test: it is the process of
// sacctDumpProcess, and returns at once as a test.
func TestHelperSacctDumpProcess(t *testing.T) {
	dump := os.Getenv(sacctDumpEnv)
	if dump == "" {
		return
	}
	data := readFile(t, dump)
	header, _, _ := strings.Cut(data, "\n")
	fake := slurmtest.New().On("sacct", func(c slurm.Call) slurmtest.Reply {
		if slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--jobs=") }) {
			return slurmtest.Reply{Stdout: header + "\n"}
		}
		stall := os.Getenv(sacctStallEnv)
		if stall == "" {
			return slurmtest.Reply{Stdout: data}
		}
		half := strings.LastIndexByte(data[:len(data)/2], '\n') + 1
		return slurmtest.Reply{Stdout: data[:half], More: stallAfter{stall}}
	})
	args := os.Args[slices.Index(os.Args, "--")+1:]
	os.Exit(runWith(appDeps{Slurm: fake}, append([]string{"migadvisor"}, args...), os.Stdout, os.Stderr))
}

// stallAfter creates its file when first read, then blocks for ever: the
// rest of a stream that never comes.
type stallAfter struct{ file string }

func (s stallAfter) Read([]byte) (int, error) {
	if err := os.WriteFile(s.file, nil, 0o600); err != nil {
		return 0, err
	}
	for {
		time.Sleep(time.Hour) // not select{}: the runtime would call it a deadlock
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
