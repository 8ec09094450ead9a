package main

// The fault matrix of collect, publish and the sbatch wrapper (issue 42
// §2; the table is docs/admin/scale.md's Faults): each fault, what the user
// sees, what is kept, how it recovers.

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/collect"
	"github.com/migadvisor/migadvisor/internal/faultfs"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// TestCollectOnAFullDisk: the disk of the history fills up in the middle
// of an import. collect fails with one sentence that says the disk is
// full and names the history (it named the dump being imported, and added
// a second line for the index of job names); the history opens, passes
// integrity_check and keeps the batches committed before; once there is
// room, the next collect completes it, every job once.
func TestCollectOnAFullDisk(t *testing.T) {
	isolate(t)
	bin := migadvisorBinary(t)
	fs := faultfs.Small(t, 64<<20)
	db := filepath.Join(fs, "history.db")
	dump := filepath.Join(t.TempDir(), "dump.psv")
	const jobs = 60_000
	writeDump(t, dump, sacctgen.FirstJobID, jobs)
	collectCmd := func() *exec.Cmd {
		return exec.Command(bin, "--db", db, "collect", "--sacct-file", dump, "--cluster", "wulver", "--json")
	}
	free := faultfs.Fill(t, fs, 4<<20) // a few batches' room
	_, errOut, code := runProcess(t, collectCmd())
	if want := "migadvisor: the history " + db + " could not be written, its file system is full ("; code != exitFailure ||
		strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, want) || !strings.Contains(errOut, "what was committed before is kept") {
		t.Errorf("on a full disk: exit %d, stderr %q", code, errOut)
	}
	kept := committedJobs(t, db)
	if kept == 0 || kept == jobs {
		t.Fatalf("%d jobs kept: the disk did not fill up in the middle of the import", kept)
	}
	free()
	if out, errOut, code := runProcess(t, collectCmd()); code != 0 {
		t.Fatalf("with room again: exit %d\n%s%s", code, out, errOut)
	}
	assertJobs(t, db, jobs)
}

// slurmdbdStub is sacct on PATH as slurmdbd's state makes it, set by
// writing "up", "down" or "hang" to the returned file: up, it prints dump;
// down, it fails as sacct 22.05 does when slurmdbd is not running; hang,
// it prints its header and then nothing (a slurmdbd that took the
// connection and never answers), its pid in the file pidfile.
func slurmdbdStub(t *testing.T, dump string) (state, pidfile string) {
	t.Helper()
	dir := t.TempDir()
	state, pidfile = filepath.Join(dir, "state"), filepath.Join(dir, "pid")
	script := fmt.Sprintf(`#!/bin/sh
case "$(cat %[1]q)" in
up) exec cat %[2]q ;;
down)
	echo "sacct: error: slurm_persist_conn_open_without_init: failed to open persistent connection to host:localhost:6819: Connection refused" >&2
	echo "sacct: error: Sending PersistInit msg: Connection refused" >&2
	echo "sacct: error: Problem talking to the database: Connection refused" >&2
	exit 1 ;;
hang) head -n 1 %[2]q; echo $$ > %[3]q; exec sleep 600 ;;
esac
`, state, dump, pidfile)
	if err := os.WriteFile(filepath.Join(dir, "sacct"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return state, pidfile
}

// historyState is what a failed collect must leave as it was: the jobs
// and the watermarks.
func historyState(t *testing.T, db string) string {
	t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var jobs, marks string
	if err := conn.QueryRow(`SELECT count(*) || ' jobs, last changed ' || coalesce(max(updated), 0) FROM jobs`).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(`SELECT coalesce(group_concat(scope || '=' || since, '; '), '') FROM watermarks`).Scan(&marks); err != nil {
		t.Fatal(err)
	}
	return jobs + "; watermarks: " + marks
}

// TestCollectWhileSlurmdbdIsDown: sacct failing (slurmdbd stopped) fails
// the collect with sacct's own reason, in one line; sacct hanging
// (slurmdbd took the connection and never answers) is stopped after
// --sacct-timeout with one line that says so (it waited for ever), and its
// process is gone. Neither changes the history: the next collect, with
// slurmdbd back, starts where the last complete one left off.
func TestCollectWhileSlurmdbdIsDown(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "site.db")
	state, pidfile := slurmdbdStub(t, devclusterDump)
	setState := func(s string) { os.WriteFile(state, []byte(s), 0o644) }
	collectWith := func(args ...string) (collect.Summary, string, int) {
		t.Helper()
		out, errOut, code := migadvisor(t, append([]string{"--db", db, "collect", "--all-users", "--scripts=false", "--cluster", "migdev",
			"--since", "2026-11-20", "--json"}, args...)...)
		var rep collect.Summary
		if code == 0 {
			if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Window == nil {
				t.Fatalf("collect: %v\n%s", err, out)
			}
		}
		return rep, errOut, code
	}
	setState("up")
	first, errOut, code := collectWith()
	if code != 0 || first.New == 0 {
		t.Fatalf("slurmdbd up: exit %d, %d jobs\n%s", code, first.New, errOut)
	}
	// From the watermark from now on.
	collectWith = func(args ...string) (collect.Summary, string, int) {
		t.Helper()
		out, errOut, code := migadvisor(t, append([]string{"--db", db, "collect", "--all-users", "--scripts=false", "--cluster", "migdev", "--json"}, args...)...)
		var rep collect.Summary
		if code == 0 {
			if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Window == nil {
				t.Fatalf("collect: %v\n%s", err, out)
			}
		}
		return rep, errOut, code
	}
	before := historyState(t, db)

	setState("down")
	if _, errOut, code := collectWith(); code != exitFailure || errOut != "migadvisor: sacct failed: sacct: error: Problem talking to the database: Connection refused\n" {
		t.Errorf("slurmdbd down: exit %d, %q", code, errOut)
	}
	if after := historyState(t, db); after != before {
		t.Errorf("slurmdbd down: the history changed: %s -> %s", before, after)
	}

	setState("hang")
	began := time.Now()
	_, errOut, code = collectWith("--sacct-timeout", "1s")
	if took := time.Since(began); code != exitFailure || took > 10*time.Second ||
		errOut != "migadvisor: sacct printed nothing for 1s, and was stopped: is slurmdbd answering? ('sacct' by hand tells)\n" {
		t.Errorf("slurmdbd hanging: exit %d after %v, %q", code, took, errOut)
	}
	if data, err := os.ReadFile(pidfile); err != nil {
		t.Errorf("sacct never hung: %v", err)
	} else if pid := strings.TrimSpace(string(data)); syscall.Kill(atoi(t, pid), 0) == nil {
		syscall.Kill(atoi(t, pid), syscall.SIGKILL)
		t.Errorf("sacct (pid %s) still runs", pid)
	}
	if after := historyState(t, db); after != before {
		t.Errorf("slurmdbd hanging: the history changed: %s -> %s", before, after)
	}

	setState("up")
	next, errOut, code := collectWith()
	if code != 0 || !next.Window.FromWatermark || !next.Window.Since.Equal(first.Window.Watermark) {
		t.Errorf("slurmdbd back: exit %d, window %+v, want from %v\n%s", code, next.Window, first.Window.Watermark, errOut)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
