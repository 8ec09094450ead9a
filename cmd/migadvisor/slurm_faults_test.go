//go:build slurm

// The fault matrix (docs/admin/scale.md, Faults) on the dev cluster's real
// Slurm: slurmdbd stopped and hanging under collect, a watermark ahead of
// the clock read by the real sacct, and the cli_filter in Slurm's own
// sbatch failing open on a broken history.

package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/internal/faultfs"
)

// TestSlurmCollectWhileSlurmdbdIsDown: slurmdbd stopped, the real sacct
// fails at once and collect says sacct's reason in one line; slurmdbd
// hanging (SIGSTOP: it holds the connection and never answers), sacct
// would wait 45 s and collect stops it after --sacct-timeout, in one line;
// neither changes the history, and with slurmdbd back the next collect
// starts where the last complete one left off. A watermark ahead of this
// host's clock, which the real sacct refuses to start at ("Start time
// requested is after end time"), is not read from.
func TestSlurmCollectWhileSlurmdbdIsDown(t *testing.T) {
	requireCluster(t)
	isolate(t)
	db := filepath.Join(t.TempDir(), "site.db")
	t.Setenv("MIGADVISOR_DB", db)
	collected := func(args ...string) (collect.Summary, string, int) {
		t.Helper()
		out, errOut, code := migadvisor(t, append([]string{"collect", "--all-users", "--scripts=false", "--json"}, args...)...)
		var rep collect.Summary
		if code == 0 {
			if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Window == nil {
				t.Fatalf("collect: %v\n%s", err, out)
			}
		}
		return rep, errOut, code
	}
	first, errOut, code := collected("--since", "1d")
	if code != 0 {
		t.Fatalf("collect: exit %d, %s", code, errOut)
	}
	state := func() string {
		conn, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var s string
		conn.QueryRow(`SELECT (SELECT count(*) || ' jobs, ' || coalesce(max(updated), 0) FROM jobs) || '; ' || (SELECT group_concat(since) FROM watermarks)`).Scan(&s)
		return s
	}
	before := state()

	start := stopDaemon(t, "slurmdbd", syscall.SIGTERM)
	_, errOut, code = collected()
	if code != exitFailure || errOut != "migadvisor: sacct failed: sacct: error: Problem talking to the database: Connection refused\n" {
		t.Errorf("slurmdbd stopped: exit %d, %q", code, errOut)
	}
	start()

	resume := stopDaemon(t, "slurmdbd", syscall.SIGSTOP)
	began := time.Now()
	_, errOut, code = collected("--sacct-timeout", "3s")
	if took := time.Since(began); code != exitFailure || took > 20*time.Second ||
		errOut != "migadvisor: sacct printed nothing for 3s, and was stopped: is slurmdbd answering? ('sacct' by hand tells)\n" {
		t.Errorf("slurmdbd hanging: exit %d after %v, %q", code, took, errOut)
	}
	resume()
	if after := state(); after != before {
		t.Errorf("the history changed: %s -> %s", before, after)
	}
	next, errOut, code := collected()
	if code != 0 || !next.Window.FromWatermark || !next.Window.Since.Equal(first.Window.Watermark) {
		t.Errorf("slurmdbd back: exit %d, window %+v, want from %v\n%s", code, next.Window, first.Window.Watermark, errOut)
	}

	// A watermark a day ahead, as a collect on a clock ahead left it.
	st, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	ahead := time.Now().Add(24 * time.Hour).Truncate(time.Second)
	err = st.SetWatermark(context.Background(), next.Window.Scope, ahead)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	later, errOut, code := collected()
	if code != 0 || !later.Window.Ahead.Equal(ahead) || later.Window.Since.After(time.Now()) || later.Window.Watermark.After(time.Now()) {
		t.Errorf("a watermark ahead of the clock: exit %d, window %+v\n%s", code, later.Window, errOut)
	}
}

// TestSlurmCliFilterFailsOpenOnFaults: Slurm's own sbatch with the
// installed cli_filter.lua submits the user's job whatever their history's
// state: on a full disk, in a read-only directory, with its filter cache
// cut short, its index or itself written by a newer migadvisor. At most
// one line of the filter's own before "Submitted batch job".
func TestSlurmCliFilterFailsOpenOnFaults(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	t.Chdir(work)
	os.Unsetenv("SLURM_JOB_ID")
	filter := installCliFilter(t, "")
	job := writeScript(t, work, "faults.sh", "#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=16M\n#SBATCH -t 1\ntrue\n")
	var ids []string
	t.Cleanup(func() { exec.Command("scancel", ids...).Run() })
	newHistoryAt := func(t *testing.T, db string) {
		st, err := history.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		os.MkdirAll(history.SpoolFor(db).Dir, 0o700)
	}
	cases := []struct {
		name  string
		setup func(t *testing.T) (db string)
	}{
		{"history on a full disk", func(t *testing.T) string {
			fs := faultfs.Small(t, 4<<20)
			db := filepath.Join(fs, "history.db")
			newHistoryAt(t, db)
			faultfs.Fill(t, fs, 0)
			return db
		}},
		{"history directory read-only", func(t *testing.T) string {
			fs := faultfs.Small(t, 4<<20)
			db := filepath.Join(fs, "history.db")
			newHistoryAt(t, db)
			faultfs.ReadOnly(t, fs)
			return db
		}},
		{"filter cache cut short", func(t *testing.T) string {
			db := filepath.Join(t.TempDir(), "history.db")
			newHistoryAt(t, db)
			os.WriteFile(index.FilterCachePath(db), []byte("migadvisor-clifilter 2\nentry 1790000000 40 12 0 9"), 0o600)
			return db
		}},
		{"index of a newer migadvisor", func(t *testing.T) string {
			db := filepath.Join(t.TempDir(), "history.db")
			newHistoryAt(t, db)
			if err := index.WriteFile(index.OwnPath(db), nil); err != nil {
				t.Fatal(err)
			}
			f, _ := os.OpenFile(index.OwnPath(db), os.O_WRONLY, 0)
			f.WriteAt([]byte{index.Version + 1}, 8)
			f.Close()
			return db
		}},
		{"history of a newer migadvisor", func(t *testing.T) string {
			db := filepath.Join(t.TempDir(), "history.db")
			conn, err := sql.Open("sqlite3", db)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.Exec("PRAGMA user_version = 999; CREATE TABLE jobs(x)")
			return db
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.setup(t)
			// Run before setup's cleanups (unmount, remove): the filter's
			// filter-record, started in the background where the spool
			// cannot be written, outlives sbatch and writes there.
			t.Cleanup(func() { waitForProcessesWith(t, "MIGADVISOR_DB="+db) })
			out, err := filter.sbatch(t, []string{"MIGADVISOR_DB=" + db}, job)
			m := submittedLine.FindStringSubmatchIndex(out)
			if err != nil || m == nil {
				t.Fatalf("sbatch: %v\n%s", err, out)
			}
			ids = append(ids, out[m[2]:m[3]])
			if said := out[:m[0]]; strings.Count(said, "\n") > 1 || (said != "" && !strings.HasPrefix(said, "migadvisor: ")) {
				t.Errorf("said before the job's id: %q", said)
			}
		})
	}
}

// waitForProcessesWith waits, up to 10 s, until no process has kv
// ("NAME=value") in its environment: what a submission starts in the
// background outlives it, and a test's cleanup must not remove the
// directory it still writes in.
func waitForProcessesWith(t *testing.T, kv string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !anyProcessWith(kv) {
			return
		}
	}
	t.Errorf("a process with %s in its environment still runs after 10 s", kv)
}

// anyProcessWith reports whether a process has kv in its environment.
func anyProcessWith(kv string) bool {
	files, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, v := range bytes.Split(data, []byte{0}) {
			if string(v) == kv {
				return true
			}
		}
	}
	return false
}
