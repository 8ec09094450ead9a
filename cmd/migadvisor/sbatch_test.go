package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/internal/faultfs"
)

// sbatchOnPath puts the fake sbatch first on PATH, giving job 4242.
func sbatchOnPath(t *testing.T) fakeSbatch {
	t.Helper()
	t.Setenv("FAKESBATCH_ID", "4242")
	return newFakeSbatch(t, "").onPath(t)
}

// refusal is what the fake sbatch says when FAKESBATCH_REFUSE has it refuse the job.
const refusal = "sbatch: error: Batch job submission failed"

func wrapperScript(t *testing.T) string {
	file := filepath.Join(t.TempDir(), "my job.sh")
	os.WriteFile(file, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH -t 10\npython train.py\n"), 0o644)
	return file
}

func TestSbatchWrapperPassesThroughAndRecords(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	sbatch := sbatchOnPath(t)
	file := wrapperScript(t)
	args := []string{"--parsable", "--export=ALL,X=1 2", "--gres=gpu:a100_20g:1", file, "--lr", "it's"}
	out, errOut, code := migadvisor(t, append([]string{"sbatch"}, args...)...)
	if code != 0 || out != "4242;migdev\n" || errOut != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if logged := sbatch.args(t); logged != strings.Join(args, "\n")+"\n" {
		t.Errorf("sbatch got:\n%s", logged)
	}
	st, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tr, err := st.Tracked(context.Background(), history.TrackedFilter{})
	if err != nil || len(tr) != 1 || tr[0].JobID != "4242" || tr[0].Cluster != "migdev" || tr[0].Profile != "2g.20gb" || tr[0].Source != file {
		t.Errorf("recorded %+v, %v (want job 4242 on 2g.20gb: the command line's --gres wins)", tr, err)
	}
}

func TestSbatchWrapperExitStatusAndDisable(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	sbatchOnPath(t)
	file := wrapperScript(t)
	t.Setenv("FAKESBATCH_REFUSE", refusal)
	if _, errOut, code := migadvisor(t, "sbatch", file); code != 1 || errOut != refusal+"\n" {
		t.Errorf("failed submission: exit %d, %q", code, errOut)
	}
	t.Setenv("FAKESBATCH_REFUSE", "")
	t.Setenv("MIGADVISOR_DISABLE", "1")
	if out, errOut, code := migadvisor(t, "sbatch", file); code != 0 || out != "Submitted batch job 4242\n" || errOut != "" {
		t.Errorf("disabled: exit %d, %q %q", code, out, errOut)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("MIGADVISOR_DISABLE=1 still touched the history")
	}
}

// holdWriteLock takes the history's write lock until the test ends (or
// release is called).
func holdWriteLock(t *testing.T, db string) (release func()) {
	t.Helper()
	lock, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := lock.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	release = func() {
		conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
		lock.Close()
	}
	t.Cleanup(release)
	return release
}

func newHistory(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	st, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	return db
}

func trackedJobs(t *testing.T, db string) []history.Tracked {
	t.Helper()
	st, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tr, err := st.Tracked(context.Background(), history.TrackedFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestSbatchWrapperSpoolsWhileTheHistoryIsLocked(t *testing.T) {
	isolate(t)
	db := newHistory(t)
	release := holdWriteLock(t, db)
	sbatchOnPath(t)
	start := time.Now()
	out, errOut, code := migadvisor(t, "sbatch", wrapperScript(t))
	if code != 0 || out != "Submitted batch job 4242\n" || errOut != "" {
		t.Errorf("locked history: exit %d, %q, %q", code, out, errOut)
	}
	if waited := time.Since(start); waited > time.Second {
		t.Errorf("the wrapper waited %v for a locked history", waited)
	}
	if pending, _ := history.SpoolFor(db).Pending(); len(pending) != 1 {
		t.Fatalf("spooled %d records, want 1", len(pending))
	}
	release()
	if tr := trackedJobs(t, db); len(tr) != 1 || tr[0].JobID != "4242" {
		t.Errorf("after the lock: %+v", tr)
	}
	if pending, _ := history.SpoolFor(db).Pending(); len(pending) != 0 {
		t.Errorf("%d records left in the spool", len(pending))
	}
}

// TestSbatchWrapperFailsOpen: whatever breaks, sbatch gets the user's exact
// arguments, its output and status are the user's, and stderr has at most
// one line from migadvisor (none with MIGADVISOR_QUIET=1).
func TestSbatchWrapperFailsOpen(t *testing.T) {
	fifo := func(t *testing.T) string { // a file system that never answers
		p := filepath.Join(t.TempDir(), "stuck")
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name  string
		setup func(t *testing.T)
	}{
		{"corrupt history", func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "history.db")
			os.WriteFile(db, []byte("this is not a database, and it is long enough to have a header"), 0o600)
			t.Setenv("MIGADVISOR_DB", db)
		}},
		{"history under a file", func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "file")
			os.WriteFile(file, nil, 0o600)
			t.Setenv("MIGADVISOR_DB", filepath.Join(file, "history.db"))
		}},
		{"no such site file", func(t *testing.T) { t.Setenv("MIGADVISOR_SITE", "/nonexistent/site.toml") }},
		{"broken site file", func(t *testing.T) {
			site := filepath.Join(t.TempDir(), "site.toml")
			os.WriteFile(site, []byte("version = 1\nname = [\n"), 0o644)
			t.Setenv("MIGADVISOR_SITE", site)
		}},
		{"site file that never answers", func(t *testing.T) { t.Setenv("MIGADVISOR_SITE", fifo(t)) }},
		// The fault matrix (docs/admin/scale.md, Faults): the history's
		// disk full, its directory read-only, it or its index written by
		// a newer migadvisor.
		{"history on a full disk", func(t *testing.T) {
			fs := faultfs.Small(t, 1<<20)
			t.Setenv("MIGADVISOR_DB", filepath.Join(fs, "history.db"))
			faultfs.Fill(t, fs, 0)
		}},
		{"history directory read-only", func(t *testing.T) {
			fs := faultfs.Small(t, 4<<20) // room for a new history: 43 pages of 16 KiB, and its WAL
			db := filepath.Join(fs, "history.db")
			st, err := history.Open(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			t.Setenv("MIGADVISOR_DB", db)
			faultfs.ReadOnly(t, fs)
		}},
		{"index of a newer migadvisor", func(t *testing.T) {
			db := os.Getenv("MIGADVISOR_DB")
			if err := index.WriteFile(index.OwnPath(db), nil); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(index.OwnPath(db), os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAt([]byte{index.Version + 1}, 8) // the index's version
			f.Close()
		}},
		{"history of a newer migadvisor", func(t *testing.T) {
			db, err := sql.Open("sqlite3", os.Getenv("MIGADVISOR_DB"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec("PRAGMA user_version = 999; CREATE TABLE jobs(x)"); err != nil {
				t.Fatal(err)
			}
		}},
		{"site history missing", func(t *testing.T) {
			site := filepath.Join(t.TempDir(), "site.toml")
			wulver, _ := os.ReadFile("../../catalog/sites/wulver.toml")
			os.WriteFile(site, append(wulver, "\n[history]\nsite_db = \"/nonexistent/site.db\"\n"...), 0o644)
			t.Setenv("MIGADVISOR_SITE", site)
		}},
	}
	sbatch := sbatchOnPath(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, quiet := range []string{"", "1"} {
				isolate(t)
				t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
				t.Setenv("MIGADVISOR_QUIET", quiet)
				tc.setup(t)
				args := []string{"--export=ALL,X=1 2", "-J", "a b", wrapperScript(t), "it's"}
				start := time.Now()
				out, errOut, code := migadvisor(t, append([]string{"sbatch"}, args...)...)
				logged := sbatch.args(t)
				lines := strings.Count(errOut, "\n")
				if code != 0 || out != "Submitted batch job 4242\n" || logged != strings.Join(args, "\n")+"\n" ||
					lines > 1 || (lines == 1 && !strings.HasPrefix(errOut, "migadvisor: ")) || (quiet == "1" && errOut != "") {
					t.Errorf("quiet=%q: exit %d, stdout %q, stderr %q, sbatch got %q", quiet, code, out, errOut, logged)
				}
				if took := time.Since(start); took > 2*time.Second {
					t.Errorf("took %v", took)
				}
			}
		})
	}
}

// TestSbatchWrapperAdvisesAndApplies: with a run of the script on 1g.10gb in
// the history, a submission that asks for a whole A100 is told the change,
// and with --mig-apply (or MIGADVISOR_APPLY=1) is submitted with it.
func TestSbatchWrapperAdvisesAndApplies(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	file := filepath.Join(t.TempDir(), "job.sh")
	os.WriteFile(file, []byte("#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=5\npython train.py\n"), 0o644)
	historyWithJob2(t, db, file)
	sbatch := sbatchOnPath(t)
	_, errOut, code := migadvisor(t, "sbatch", file, "--mig-apply")
	logged := sbatch.args(t)
	// 1g.10gb: (1 CPU + 16 × 10/80) SU/h × 7 s = 0.00583 SU; a whole A100 is
	// predicted faster but at 17 SU/h costs more.
	advice := regexp.MustCompile(`^migadvisor: this script completed on 1g\.10gb in 1 run, at ~0\.00583 SU instead of ~([0-9.]+) SU on a full A100\. ` +
		`Next time, submit with --gres=gpu:a100_10g:1, or with --mig-apply \(or MIGADVISOR_APPLY=1\) to have it changed for you\.\n` +
		`migadvisor: to have job 4242 changed now, cancel it while it waits \(scancel 4242\) and submit it again with --gres=gpu:a100_10g:1\.\n$`)
	m := advice.FindStringSubmatch(errOut)
	if code != 0 || m == nil || logged != file+"\n--mig-apply\n" {
		t.Fatalf("advice: exit %d, %q; sbatch got %q (--mig-apply after the script is the script's)", code, errOut, logged)
	}
	if full, _ := strconv.ParseFloat(m[1], 64); full <= 0.0058 {
		t.Errorf("a full A100 costs %v SU, no more than the slice", full)
	}
	for _, apply := range [][]string{{"--mig-apply", "-J", "x", file}, {"-J", "x", file}} {
		t.Setenv("MIGADVISOR_APPLY", map[bool]string{true: "", false: "1"}[apply[0] == "--mig-apply"])
		_, errOut, code = migadvisor(t, append([]string{"sbatch"}, apply...)...)
		logged = sbatch.args(t)
		if code != 0 || logged != "-J\nx\n--gres=gpu:a100_10g:1\n"+file+"\n" ||
			!strings.HasSuffix(errOut, "migadvisor: submitting on 1g.10gb: --gres=gpu:a100:1 -> --gres=gpu:a100_10g:1\n") {
			t.Errorf("%q: exit %d, %q; sbatch got %q", apply, code, errOut, logged)
		}
	}
	// Asking for 1g.10gb already: nothing to say.
	t.Setenv("MIGADVISOR_APPLY", "")
	if _, errOut, code = migadvisor(t, "sbatch", "--gres=gpu:a100_10g:1", file); code != 0 || errOut != "" {
		t.Errorf("already on the advice: exit %d, %q", code, errOut)
	}
	if logged = sbatch.args(t); logged != "--gres=gpu:a100_10g:1\n"+file+"\n" {
		t.Errorf("already on the advice: sbatch got %q", logged)
	}
}

// TestSbatchWrapperConcurrentSubmissionsUnderALock: 100 wrappers at once,
// as 100 processes, while another process holds the history's write lock.
// Every one reaches sbatch and exits with its status, and once the lock is
// released the history has all 100 jobs.
func TestSbatchWrapperConcurrentSubmissionsUnderALock(t *testing.T) {
	isolate(t)
	bin := migadvisorBinary(t)
	db := newHistory(t)
	sbatch := newFakeSbatch(t, "") // job ids: its process ids
	t.Setenv("MIGADVISOR_SBATCH", sbatch.Path)
	file := wrapperScript(t)
	release := lockHolder(t, db)

	const n = 100
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "sbatch", "--export=ALL,X=1 2", file)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			id, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "Submitted batch job ")
			// On a loaded machine the advice may miss its deadline: one line.
			late := stderr.String() == "migadvisor: no advice this time: gave up after 150ms\n"
			if err != nil || !ok || (stderr.Len() > 0 && !late) {
				errs <- fmt.Errorf("wrapper %d: %v, stdout %q, stderr %q", i, err, out, stderr.String())
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := 0
	for _, c := range sbatch.take(t) {
		if slices.Equal(c.Args, []string{"--export=ALL,X=1 2", file}) {
			got++
		}
	}
	if got != n {
		t.Errorf("sbatch ran %d times with the user's arguments, want %d", got, n)
	}
	release()
	recorded := map[string]bool{}
	for _, tr := range trackedJobs(t, db) {
		recorded[tr.JobID] = true
	}
	for _, id := range ids {
		if !recorded[id] {
			t.Errorf("job %s is not in the history", id)
		}
	}
	if len(recorded) != n {
		t.Errorf("%d jobs in the history, want %d", len(recorded), n)
	}
}

// The wrapper judges the script where sbatch runs: an --output on the
// command line whose directory does not exist in the working directory is
// said before the submission (the lint lines themselves are tested in
// advisor/app/wrapper).
func TestSbatchWrapperLintsInTheWorkingDirectory(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	sbatch := sbatchOnPath(t)
	ddp := filepath.Join(t.TempDir(), "ddp.sh")
	os.WriteFile(ddp, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH -t 10\npython train.py\n"), 0o644)
	wd, _ := os.Getwd()
	_, errOut, code := migadvisor(t, "sbatch", "-o", "no-such-dir/%j.out", ddp)
	if want := `migadvisor: sbatch's command line: --output's directory "no-such-dir" does not exist in ` + wd; code != 0 || !strings.Contains(errOut, want) {
		t.Errorf("-o into a missing directory: exit %d %q", code, errOut)
	}
	if logged := sbatch.args(t); logged != "-o\nno-such-dir/%j.out\n"+ddp+"\n" {
		t.Errorf("the job was not submitted as asked: %q", logged)
	}
}
