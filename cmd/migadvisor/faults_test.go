package main

// The fault matrix of collect, publish and the sbatch wrapper (issue 42
// §2; the table is docs/admin/scale.md's Faults): each fault, what the user
// sees, what is kept, how it recovers.

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/app/index"
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

// historyOf is a history of n generated jobs at db, collected by the
// binary (in process, under -race, it would take ten times as long).
func historyOf(t *testing.T, db string, n int) {
	t.Helper()
	dump := filepath.Join(t.TempDir(), "dump.psv")
	writeDump(t, dump, sacctgen.FirstJobID, n)
	cmd := exec.Command(migadvisorBinary(t), "--db", db, "collect", "--sacct-file", dump, "--cluster", "wulver")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("collect: %v\n%s", err, out)
	}
}

// published is what a directory published in holds: each file's name,
// size and checksum, dot files (unfinished copies, the lock) included.
func published(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d %x\n", e.Name(), len(data), sha256.Sum256(data))
	}
	return b.String()
}

// unfinished lists the copies of the snapshot and the index a publish
// left unfinished in dir.
func unfinished(t *testing.T, dir string) []string {
	t.Helper()
	var left []string
	for _, name := range []string{index.SnapshotName, index.IndexName} {
		m, _ := filepath.Glob(filepath.Join(dir, "."+name+".tmp*"))
		left = append(left, m...)
	}
	return left
}

// wholePublication checks that dir holds a snapshot that opens and passes
// integrity_check, with jobs jobs, and an index that opens.
func wholePublication(t *testing.T, dir string, jobs int) {
	t.Helper()
	snap := filepath.Join(dir, index.SnapshotName)
	assertJobs(t, snap, jobs)
	r, err := index.Open(filepath.Join(dir, index.IndexName))
	if err != nil {
		t.Errorf("the index: %v", err)
		return
	}
	r.Close()
}

// TestPublishStoppedMidway: publish stopped in the middle of writing the
// snapshot, by SIGTERM and by SIGKILL. Readers keep the previous files,
// whole, either way. SIGTERM ends it with one line and exit 130 and
// nothing of its own left behind; SIGKILL leaves its unfinished copy, as
// large as the history (it stayed there, one more for each publish
// killed: a cron job under a time limit filled the shared file system),
// which the next publish removes.
func TestPublishStoppedMidway(t *testing.T) {
	isolate(t)
	bin := migadvisorBinary(t)
	db := filepath.Join(t.TempDir(), "live.db")
	const jobs = 60_000
	historyOf(t, db, jobs)
	dir := t.TempDir()
	if _, errOut, code := migadvisor(t, "--db", db, "publish", dir); code != 0 {
		t.Fatalf("publish: %s", errOut)
	}
	before := published(t, dir)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		cmd := exec.Command(bin, "--db", db, "publish", dir)
		var errOut strings.Builder
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The moment its copy of the history is under way.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
			if copies := unfinished(t, dir); len(copies) > 0 {
				if info, err := os.Stat(copies[0]); err == nil && info.Size() > 0 {
					break
				}
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("%v: no copy of the snapshot under way after 30 s", sig)
			}
		}
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		switch {
		case err == nil:
			t.Fatalf("%v: publish ended before the signal", sig)
		case sig == syscall.SIGTERM && (ws.ExitStatus() != exitInterrupted || strings.Count(errOut.String(), "\n") != 1 ||
			!strings.HasPrefix(errOut.String(), "migadvisor: interrupted; what was published before is in place, whole")):
			t.Errorf("SIGTERM: %v, stderr %q", err, errOut.String())
		case sig == syscall.SIGTERM && len(unfinished(t, dir)) > 0:
			t.Errorf("SIGTERM left %v", unfinished(t, dir))
		case sig == syscall.SIGKILL && !ws.Signaled():
			t.Errorf("SIGKILL: %v", err)
		}
		if after := strings.Join(slices.DeleteFunc(strings.Split(published(t, dir), "\n"), func(l string) bool { return strings.HasPrefix(l, ".history.db.tmp") }), "\n"); after != before {
			t.Errorf("%v: the published files changed:\n%s->\n%s", sig, before, after)
		}
		wholePublication(t, dir, jobs)
	}
	if _, errOut, code := migadvisor(t, "--db", db, "publish", dir); code != 0 {
		t.Fatalf("publish after the kill: %s", errOut)
	}
	if left := unfinished(t, dir); len(left) > 0 {
		t.Errorf("the killed publish's copy is still there: %v", left)
	}
	wholePublication(t, dir, jobs)
}

// TestPublishOnAFullDisk: the file system published in fills up while
// the snapshot is written. publish fails with one line that says so and
// names the snapshot; the files published before are as they were, and
// nothing unfinished is left; with room again, it publishes.
func TestPublishOnAFullDisk(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "live.db")
	const jobs = 20_000
	historyOf(t, db, jobs)
	dir := faultfs.Small(t, 32<<20)
	if _, errOut, code := migadvisor(t, "--db", db, "publish", dir); code != 0 {
		t.Fatalf("publish: %s", errOut)
	}
	before := published(t, dir)
	free := faultfs.Fill(t, dir, 1<<20) // less than a snapshot
	_, errOut, code := migadvisor(t, "--db", db, "publish", dir)
	if snap := filepath.Join(dir, index.SnapshotName); code != exitFailure || strings.Count(errOut, "\n") != 1 ||
		!strings.HasPrefix(errOut, "migadvisor: snapshot "+snap+": its file system is full (") {
		t.Errorf("on a full disk: exit %d, %q", code, errOut)
	}
	free()
	if after := published(t, dir); after != before {
		t.Errorf("the published files changed:\n%s->\n%s", before, after)
	}
	if _, errOut, code := migadvisor(t, "--db", db, "publish", dir); code != 0 {
		t.Fatalf("publish with room again: %s", errOut)
	}
	wholePublication(t, dir, jobs)
}

// TestTwoPublishesAtOnce: two publishes into one directory at once (two
// collects --publish that overlap) both succeed, one after the other (a
// lock in the directory): whole files, of one history, nothing left over.
func TestTwoPublishesAtOnce(t *testing.T) {
	isolate(t)
	bin := migadvisorBinary(t)
	db := filepath.Join(t.TempDir(), "live.db")
	const jobs = 30_000
	historyOf(t, db, jobs)
	dir := t.TempDir()
	cmds := []*exec.Cmd{exec.Command(bin, "--db", db, "publish", dir), exec.Command(bin, "--db", db, "publish", dir)}
	outs := make([]strings.Builder, len(cmds))
	for i, cmd := range cmds {
		cmd.Stderr = &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("publish %d: %v\n%s", i, err, outs[i].String())
		}
	}
	if left := unfinished(t, dir); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
	wholePublication(t, dir, jobs)
}

// TestCollectStoppedBySignals: a site-wide collect --publish stopped by
// SIGTERM and by SIGKILL at each of its steps that writes: while it
// imports what sacct streams, and while it publishes. After each, the
// history opens, passes integrity_check and holds whole batches; the
// watermark moved only if the import was whole; the published files are
// the previous ones, whole. SIGTERM ends it with one line and exit 130
// (it died of the signal, where it was), leaving nothing of its own; the
// last collect completes the history, every job once, and publishes it.
func TestCollectStoppedBySignals(t *testing.T) {
	isolate(t)
	dump := filepath.Join(t.TempDir(), "dump.psv")
	const jobs = 30_000
	writeDump(t, dump, sacctgen.FirstJobID, jobs)
	db := filepath.Join(t.TempDir(), "site.db")
	pub := t.TempDir()
	collectCmd := func(stall string) *exec.Cmd {
		cmd := sacctDumpProcess(t, dump, "--db", db, "collect", "--all-users", "--scripts=false", "--since", "2026-01-01",
			"--overlap", "0s", "--cluster", "wulver", "--publish", pub, "--json")
		if stall != "" {
			cmd.Env = append(cmd.Env, sacctStallEnv+"="+stall) // sacct stops halfway and waits
		}
		return cmd
	}
	watermark := func() string {
		conn, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var since string
		conn.QueryRow(`SELECT coalesce(group_concat(since), '') FROM watermarks`).Scan(&since)
		return since
	}
	steps := []struct {
		name, doing string
		at          func(t *testing.T) (stall string, reached func() bool)
	}{
		{"import", "imports", func(t *testing.T) (string, func() bool) {
			stall := filepath.Join(t.TempDir(), "stalled")
			return stall, func() bool { return fileExists(stall) }
		}},
		{"publish", "publishes", func(t *testing.T) (string, func() bool) {
			return "", func() bool {
				copies := unfinished(t, pub)
				info, err := os.Stat(strings.Join(copies[:min(len(copies), 1)], ""))
				return len(copies) > 0 && err == nil && info.Size() > 0
			}
		}},
	}
	for _, step := range steps {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
			markBefore, pubBefore := "", published(t, pub)
			if fileExists(db) {
				markBefore = watermark()
			}
			stall, reached := step.at(t)
			cmd := collectCmd(stall)
			var errOut strings.Builder
			cmd.Stderr = &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(time.Minute); !reached(); time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("%s: the collect never got there\n%s", step.name, errOut.String())
				}
			}
			if step.name == "import" {
				time.Sleep(300 * time.Millisecond) // a batch or two committed meanwhile
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			what := fmt.Sprintf("%v while it %s", sig, step.doing)
			switch {
			case err == nil:
				t.Fatalf("%s: the collect ended before the signal", what)
			case sig == syscall.SIGTERM && (ws.ExitStatus() != exitInterrupted || errOut.String() !=
				"migadvisor: interrupted; what this collect committed is kept, and the next collect goes on from there\n"):
				t.Errorf("%s: %v, stderr %q", what, err, errOut.String())
			case sig == syscall.SIGKILL && !ws.Signaled():
				t.Errorf("%s: %v", what, err)
			}
			kept := committedJobs(t, db)
			if mark := watermark(); step.name == "import" && (mark != markBefore || kept%5000 != 0) {
				t.Errorf("%s: %d jobs kept, watermark %q (before: %q)", what, kept, mark, markBefore)
			} else if step.name == "publish" && (mark == "" || kept != jobs) {
				t.Errorf("%s: the import was whole, yet %d jobs, watermark %q", what, kept, mark)
			}
			after := published(t, pub)
			if sig == syscall.SIGKILL {
				after = strings.Join(slices.DeleteFunc(strings.Split(after, "\n"), func(l string) bool { return strings.HasPrefix(l, ".history.db.tmp") }), "\n")
			}
			if after != pubBefore && !(pubBefore == "" && after == index.LockName+" 0 "+fmt.Sprintf("%x", sha256.Sum256(nil))+"\n") {
				t.Errorf("%s: the published files changed:\n%s->\n%s", what, pubBefore, after)
			}
			t.Logf("%s: %d jobs kept", what, kept)
		}
	}
	out, err := collectCmd("").Output()
	var rep collect.Summary
	if err != nil || json.Unmarshal(out, &rep) != nil || rep.Published == nil {
		t.Fatalf("the last collect: %v\n%s", err, out)
	}
	assertJobs(t, db, jobs)
	if left := unfinished(t, pub); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
	wholePublication(t, pub, jobs)
}

// tree lists the files under dir, with their sizes and checksums.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %x\n", strings.TrimPrefix(path, dir), len(data), sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestReadOnlyHistoryDirectory: the history's file system read-only (a
// home mounted read-only, a full quota's refusal): collect fails in one
// line that names the history and why, publish reads it and publishes it
// elsewhere but cannot publish into it, the wrapper submits all the same;
// not a byte under it changes. Writable again, collect goes on.
func TestReadOnlyHistoryDirectory(t *testing.T) {
	isolate(t)
	fs := faultfs.Small(t, 16<<20)
	db := filepath.Join(fs, "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	script := wrapperScript(t)
	historyWithJob2(t, db, script)
	inside := filepath.Join(fs, "published")
	os.Mkdir(inside, 0o755)
	writable := faultfs.ReadOnly(t, fs)
	before := tree(t, fs)

	_, errOut, code := migadvisor(t, "collect", "--sacct-file", devclusterDump)
	if code != exitFailure || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "migadvisor: history "+db+": ") ||
		!strings.Contains(errOut, "read-only file system") {
		t.Errorf("collect: exit %d, %q", code, errOut)
	}
	elsewhere := t.TempDir()
	if _, errOut, code := migadvisor(t, "publish", elsewhere); code != 0 {
		t.Errorf("publish from it: exit %d, %q", code, errOut)
	}
	wholePublication(t, elsewhere, 14)
	_, errOut, code = migadvisor(t, "publish", inside)
	if code != exitFailure || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, inside) || !strings.Contains(errOut, "read-only file system") {
		t.Errorf("publish into it: exit %d, %q", code, errOut)
	}
	sbatchOnPath(t)
	out, errOut, code := migadvisor(t, "sbatch", script)
	// Its advice, then one line: the submission is not recorded.
	if code != 0 || out != "Submitted batch job 4242\n" || !strings.Contains(errOut, "this script completed on 1g.10gb") ||
		!strings.HasSuffix(errOut, "\nmigadvisor: the job is submitted but not in the history: spool: mkdir "+db+".spool: read-only file system\n") {
		t.Errorf("the wrapper: exit %d, %q, %q", code, out, errOut)
	}
	if after := tree(t, fs); after != before {
		t.Errorf("the read-only directory changed:\n%s->\n%s", before, after)
	}
	writable()
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", devclusterDump); code != 0 {
		t.Errorf("collect, writable again: exit %d, %q", code, errOut)
	}
}

// TestDamagedOrNewerHistoryIsLeftAlone: a history that is not a database,
// one with a damaged page, one a newer migadvisor wrote. collect and
// publish refuse it in one line that names it and says the way out (a
// damaged page met mid-import was blamed on the dump being imported, and
// a newer history was switched to WAL, its header rewritten); not a byte
// of it changes, nothing is made beside it, nothing is published.
func TestDamagedOrNewerHistoryIsLeftAlone(t *testing.T) {
	isolate(t)
	good := filepath.Join(t.TempDir(), "good.db")
	historyWithJob2(t, good, wrapperScript(t))
	cases := []struct {
		name string
		make func(t *testing.T, db string)
		says []string // what the one line holds, %s for the history
	}{
		{"not a database", func(t *testing.T, db string) {
			os.WriteFile(db, []byte(strings.Repeat("not a database at all ", 200)), 0o600)
		}, []string{"the history %s is damaged", "mv %s %s.broken"}},
		{"a damaged page", func(t *testing.T, db string) {
			copyFile(t, good, db)
			conn, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
			if err != nil {
				t.Fatal(err)
			}
			var root, size int64
			conn.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = 'jobs'`).Scan(&root)
			conn.QueryRow(`PRAGMA page_size`).Scan(&size)
			conn.Close()
			f, err := os.OpenFile(db, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAt(bytes.Repeat([]byte{0xff}, int(size)), (root-1)*size) // the jobs' first page
			f.Close()
		}, []string{"the history %s is damaged", "mv %s %s.broken"}},
		{"a newer migadvisor's", func(t *testing.T, db string) {
			conn, err := sql.Open("sqlite3", db)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Exec("PRAGMA user_version = 999; CREATE TABLE jobs(x)"); err != nil {
				t.Fatal(err)
			}
		}, []string{"history %s: the history was written by a newer migadvisor (schema 999;", "use that migadvisor, or a newer one, with it"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "history.db")
			tc.make(t, db)
			pub := t.TempDir()
			before := tree(t, dir)
			for _, args := range [][]string{{"collect", "--sacct-file", devclusterDump}, {"publish", pub}, {"collect", "--sacct-file", devclusterDump, "--publish", pub}} {
				_, errOut, code := migadvisor(t, append([]string{"--db", db}, args...)...)
				ok := code == exitFailure && strings.Count(errOut, "\n") == 1 && strings.HasPrefix(errOut, "migadvisor: ")
				for _, s := range tc.says {
					ok = ok && strings.Contains(errOut, strings.ReplaceAll(s, "%s", db))
				}
				if !ok {
					t.Errorf("%s: exit %d, %q", args[0], code, errOut)
				}
			}
			if after := tree(t, dir); after != before {
				t.Errorf("the history's directory changed:\n%s->\n%s", before, after)
			}
			if left := strings.ReplaceAll(tree(t, pub), "/"+index.LockName+" 0 "+fmt.Sprintf("%x", sha256.Sum256(nil))+"\n", ""); left != "" {
				t.Errorf("published:\n%s", left)
			}
		})
	}
}

// jobsDigest is the jobs of the history at db as collect filed them,
// less when each was written.
func jobsDigest(t *testing.T, db string) string {
	t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	var digest string
	if err := conn.QueryRow(`SELECT count(*), group_concat(cluster || '|' || job_key || '|' || state || '|' || coalesce(elapsed_s, '') || '|' ||
		coalesce(name, '') || '|' || gpu_type || '|' || unsettled, ';') FROM (SELECT * FROM jobs ORDER BY cluster, job_key)`).Scan(&n, &digest); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d jobs: %x", n, sha256.Sum256([]byte(digest)))
}

// TestTwoCollectsAtOnce: two site-wide collects --publish on one history
// at once (a cron run that overlaps the next): both succeed, and the
// history and what is published are those of a single collect.
func TestTwoCollectsAtOnce(t *testing.T) {
	isolate(t)
	dump := filepath.Join(t.TempDir(), "dump.psv")
	const jobs = 30_000
	writeDump(t, dump, sacctgen.FirstJobID, jobs)
	collectCmd := func(db, pub string) *exec.Cmd {
		return sacctDumpProcess(t, dump, "--db", db, "collect", "--all-users", "--scripts=false", "--since", "2026-01-01",
			"--cluster", "wulver", "--publish", pub)
	}
	single := filepath.Join(t.TempDir(), "single.db")
	if out, err := collectCmd(single, t.TempDir()).CombinedOutput(); err != nil {
		t.Fatalf("a single collect: %v\n%s", err, out)
	}
	db, pub := filepath.Join(t.TempDir(), "site.db"), t.TempDir()
	cmds := []*exec.Cmd{collectCmd(db, pub), collectCmd(db, pub)}
	outs := make([]strings.Builder, len(cmds))
	for i, cmd := range cmds {
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("collect %d: %v\n%s", i, err, outs[i].String())
		}
	}
	assertJobs(t, db, jobs)
	if got, want := jobsDigest(t, db), jobsDigest(t, single); got != want {
		t.Errorf("two collects at once filed %s; a single one, %s", got, want)
	}
	wholePublication(t, pub, jobs)
	if left := unfinished(t, pub); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
}

// TestFaultsTableNamesItsTests: every test the Faults table of
// docs/admin/scale.md names is in the suite (a subtest, Parent/case, as
// its case's name), and every fault test of this file is in the table: the
// matrix in the docs is the one the suite holds.
func TestFaultsTableNamesItsTests(t *testing.T) {
	doc := readFile(t, "../../docs/admin/scale.md")
	_, table, ok := strings.Cut(doc, "\n## Faults\n")
	if !ok {
		t.Fatal("docs/admin/scale.md has no Faults section")
	}
	sources := map[string]string{} // test function -> its file's text
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		text := readFile(t, path)
		for _, m := range regexp.MustCompile(`(?m)^func (Test\w+)\(`).FindAllStringSubmatch(text, -1) {
			sources[m[1]] = text
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`(Test[\\w/-]+)`").FindAllStringSubmatch(table, -1) {
		parent, sub, _ := strings.Cut(m[1], "/")
		named[parent] = true
		text, ok := sources[parent]
		switch {
		case !ok:
			t.Errorf("the Faults table names %s, which no test file has", m[1])
		case sub != "" && !strings.Contains(text, `"`+strings.ReplaceAll(sub, "_", " ")+`"`):
			t.Errorf("the Faults table names %s, a case %s does not have", m[1], parent)
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^func (Test\w+)\(`).FindAllStringSubmatch(readFile(t, "faults_test.go"), -1) {
		if !named[m[1]] && m[1] != "TestFaultsTableNamesItsTests" {
			t.Errorf("%s is not in the Faults table", m[1])
		}
	}
}
