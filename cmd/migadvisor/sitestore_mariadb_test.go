//go:build mariadb

package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/mariadb"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// storeOptionFile is an option file, as an admin keeps it (0600), for a new
// database of the dev cluster's MariaDB, dropped when the test ends; and a
// copy with a wrong password.
func storeOptionFile(t *testing.T) (file, wrong string) {
	t.Helper()
	dev := "/var/tmp/slurm-local/migadvisor-site-store.cnf"
	if dir := os.Getenv("DEV_CLUSTER_STATE"); dir != "" {
		dev = filepath.Join(dir, "migadvisor-site-store.cnf")
	}
	opt, err := mariadb.ReadOptionFile(dev)
	if err != nil {
		t.Fatalf("the dev cluster's site store (scripts/dev-cluster.sh up makes it): %v", err)
	}
	db, err := mariadb.Connect(opt)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	rand.Read(b)
	name := "migadvisor_test_" + hex.EncodeToString(b)
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Exec("DROP DATABASE " + name); db.Close() })
	write := func(base, password string) string {
		f := filepath.Join(t.TempDir(), base)
		text := fmt.Sprintf("[client]\nuser = %s\npassword = \"%s\"\nsocket = %s\ndatabase = %s\n", opt.User, password, opt.Socket, name)
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	return write("site-store.cnf", opt.Password), write("wrong.cnf", "not-"+opt.Password)
}

// The admin's flow with the site history in MariaDB: collect --all-users
// sends what it imported to the store and publishes the store; publish
// alone publishes the store too; a store that refuses the password fails
// the collect before it imports, in one sentence naming it.
func TestMariaDBCollectAndPublish(t *testing.T) {
	isolate(t)
	live := filepath.Join(t.TempDir(), "site.db")
	t.Setenv("MIGADVISOR_DB", live)
	store, wrong := storeOptionFile(t)
	shared := t.TempDir()
	dump := "../../testdata/sacct/devcluster-22.05.psv"
	text, errOut, code := migadvisor(t, "collect", "--all-users", "--scripts=false", "--sacct-file", dump, "--cluster", "migdev",
		"--site-store", store, "--publish", shared, "--json")
	var rep collect.Summary
	if err := json.Unmarshal([]byte(text), &rep); code != 0 || err != nil || rep.Store == nil || rep.Published == nil {
		t.Fatalf("exit %d, %v: %s%s", code, err, text, errOut)
	}
	jobs := rep.New
	if jobs == 0 || rep.Store.Changes < jobs || !strings.Contains(rep.Store.Store, "/migadvisor_test_") {
		t.Errorf("%d new jobs, the store got %+v", jobs, rep.Store)
	}
	if n := snapshotJobs(t, filepath.Join(shared, index.SnapshotName)); n != jobs {
		t.Errorf("the snapshot published from the store holds %d jobs, want %d", n, jobs)
	}

	again := t.TempDir()
	text, errOut, code = migadvisor(t, "publish", again, "--site-store", store)
	if code != 0 || !strings.HasPrefix(text, "published "+filepath.Join(again, index.SnapshotName)) || !strings.Contains(text, " from the site store ") {
		t.Fatalf("publish: exit %d: %s%s", code, text, errOut)
	}
	if n := snapshotJobs(t, filepath.Join(again, index.SnapshotName)); n != jobs {
		t.Errorf("publish from the store: %d jobs, want %d", n, jobs)
	}

	before, _ := os.ReadFile(live)
	_, errOut, code = migadvisor(t, "collect", "--all-users", "--scripts=false", "--sacct-file", dump, "--cluster", "migdev", "--site-store", wrong)
	if code == 0 || strings.Count(strings.TrimSpace(errOut), "\n") > 0 ||
		!strings.Contains(errOut, "could not connect: the server refused the user and password") || strings.Contains(errOut, "not-") {
		t.Errorf("a wrong password: exit %d: %q", code, errOut)
	}
	if after, _ := os.ReadFile(live); len(after) != len(before) {
		t.Error("the collect imported before it reached the store")
	}
}

// report reads the site store where there is one, and finds there what
// it finds in the collector's own history: the same jobs, scripts and SU.
func TestMariaDBReport(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "site.db"))
	store, _ := storeOptionFile(t)
	if _, errOut, code := migadvisor(t, "collect", "--all-users", "--scripts=false", "--sacct-file", "testdata/jobstats/full-3gib.psv",
		"--site-store", store); code != 0 {
		t.Fatalf("collect: exit %d: %s", code, errOut)
	}
	read := func(from string) (string, map[string]any) {
		text, errOut, code := migadvisor(t, "report", "--month", "2026-11", "--min-su-saved", "0", "--json", "--site-store", from)
		var rep map[string]any
		if err := json.Unmarshal([]byte(text), &rep); code != 0 || err != nil {
			t.Fatalf("report --site-store %s: exit %d, %v: %s%s", from, code, err, text, errOut)
		}
		where, _ := rep["history"].(string)
		delete(rep, "history")
		return where, rep
	}
	fromStore, viaStore := read(store)
	_, own := read("off")
	if !strings.HasPrefix(fromStore, "the site store ") || !reflect.DeepEqual(viaStore, own) {
		t.Errorf("from %s:\n%v\nfrom the history:\n%v", fromStore, viaStore, own)
	}
	if scripts, _ := viaStore["scripts"].([]any); len(scripts) != 1 {
		t.Errorf("scripts from the store: %v", viaStore["scripts"])
	}
}

func snapshotJobs(t *testing.T, path string) int {
	t.Helper()
	st, err := history.OpenWith(t.Context(), path, history.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.History(t.Context(), history.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

// storeJobs counts the jobs in the store that opt names, and the distinct ones.
func storeJobs(t *testing.T, file string) (n, distinct int) {
	t.Helper()
	opt, err := mariadb.ReadOptionFile(file)
	if err != nil {
		t.Fatal(err)
	}
	db, err := mariadb.Connect(opt)
	if err != nil {
		return -1, -1 // not answering
	}
	defer db.Close()
	if err := db.QueryRow("SELECT count(*), count(DISTINCT cluster, job_key) FROM jobs").Scan(&n, &distinct); err != nil {
		return -1, -1 // not migrated yet, or going
	}
	return n, distinct
}

// privateMariaDB is a MariaDB server of the test's own (the dev cluster's
// packages, a data directory in a temporary one, its socket alone), which
// the test may stop and start again without touching the dev cluster's,
// which slurmdbd and the other tests use meanwhile; and an option file for
// a store in it. restart stops it (SIGTERM, as a restart does) and returns
// the function that starts it again. It is stopped when the test ends.
func privateMariaDB(t *testing.T) (optionFile string, restart func() (start func())) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("runs a MariaDB server of its own: needs root (make test-slurm runs as root)")
	}
	dir, err := os.MkdirTemp("", "migadvisor-mariadb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data, sock := filepath.Join(dir, "data"), filepath.Join(dir, "mysqld.sock")
	small := "--innodb-log-file-size=4M"
	install := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+data, "--user=root", small,
		"--auth-root-authentication-method=socket", "--skip-test-db")
	if out, err := install.CombinedOutput(); err != nil {
		t.Skipf("mariadb-install-db (scripts/dev-cluster.sh up installs MariaDB): %v\n%s", err, out)
	}
	var server *exec.Cmd
	start := func() {
		t.Helper()
		server = exec.Command("/usr/sbin/mariadbd", "--no-defaults", "--datadir="+data, "--socket="+sock, "--skip-networking",
			"--user=root", "--log-error="+filepath.Join(dir, "error.log"), "--innodb-buffer-pool-size=64M", small)
		if err := server.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(30 * time.Second); exec.Command("mariadb-admin", "--no-defaults", "--socket="+sock, "ping").Run() != nil; time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the test's MariaDB did not start: %s", readFile(t, filepath.Join(dir, "error.log")))
			}
		}
	}
	stop := func() {
		if server != nil && server.ProcessState == nil {
			server.Process.Signal(syscall.SIGTERM)
			server.Wait()
		}
	}
	start()
	t.Cleanup(stop)
	sql := "CREATE DATABASE store; CREATE USER 'migadvisor'@'localhost' IDENTIFIED BY 'test-pw'; GRANT ALL PRIVILEGES ON store.* TO 'migadvisor'@'localhost';"
	if out, err := exec.Command("mariadb", "--no-defaults", "--socket="+sock, "-e", sql).CombinedOutput(); err != nil {
		t.Fatalf("create the store: %v\n%s", err, out)
	}
	optionFile = filepath.Join(dir, "site-store.cnf")
	text := fmt.Sprintf("[client]\nuser = migadvisor\npassword = \"test-pw\"\nsocket = %s\ndatabase = store\n", sock)
	if err := os.WriteFile(optionFile, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return optionFile, func() func() {
		stop()
		return start
	}
}

// The fault matrix's site store (docs/admin/scale.md, Faults): a collect
// killed (SIGKILL) while it sends to the store, then MariaDB restarted
// while the next one sends (a server of the test's own: restarting the
// dev cluster's would cut off the other tests and slurmdbd). The killed
// one leaves the store with what it committed; the one whose server went
// fails in one sentence that names the store and says the jobs are in the
// collector's history; once MariaDB is back, the next collect sends the
// rest: the store holds every job once, as the history does.
func TestMariaDBCollectKilledOrServerRestarted(t *testing.T) {
	isolate(t)
	store, restart := privateMariaDB(t)
	bin := migadvisorBinary(t)
	live := filepath.Join(t.TempDir(), "site.db")
	dump := filepath.Join(t.TempDir(), "dump.psv")
	const jobs = 60_000
	writeDump(t, dump, sacctgen.FirstJobID, jobs)
	collectCmd := func() *exec.Cmd {
		return exec.Command(bin, "--db", live, "collect", "--all-users", "--scripts=false", "--sacct-file", dump, "--cluster", "wulver",
			"--site-store", store)
	}
	// midPush waits until the store holds some of the jobs, not all.
	midPush := func(what string, cmd *exec.Cmd) int {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if n, _ := storeJobs(t, store); n > 0 && n < jobs {
				return n
			}
			if cmd.ProcessState != nil || time.Now().After(deadline) {
				t.Fatalf("%s: the store never held part of the jobs", what)
			}
		}
	}

	killed := collectCmd()
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	at := midPush("SIGKILL", killed)
	killed.Process.Signal(syscall.SIGKILL)
	killed.Wait()
	if ws, _ := killed.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() {
		t.Fatalf("the collect ended before SIGKILL")
	}
	kept, distinct := storeJobs(t, store)
	t.Logf("killed with %d jobs in the store; %d after", at, kept)
	if kept < at || kept != distinct {
		t.Errorf("after SIGKILL: %d jobs in the store (%d distinct), %d before", kept, distinct, at)
	}

	restarted := collectCmd()
	var errOut strings.Builder
	restarted.Stderr = &errOut
	// The first collect imported some; this one imports them all again
	// (unchanged), and sends what the outbox holds.
	if err := restarted.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if n, _ := storeJobs(t, store); n > kept {
			break
		}
		if time.Now().After(deadline) {
			restarted.Process.Kill()
			t.Fatal("the second collect never sent anything")
		}
	}
	start := restart()
	err := restarted.Wait()
	said := errOut.String()
	t.Logf("with MariaDB restarted: %v\n%s", err, said)
	if err == nil {
		t.Log("the second collect had sent everything before MariaDB stopped")
	} else if strings.Count(said, "\n") != 1 || !strings.Contains(said, "site store ") ||
		!strings.Contains(said, "what this collect imported is in "+live+", and the next collect sends it") {
		t.Errorf("MariaDB gone mid-push: %v, %q", err, said)
	}
	start()
	if out, err := collectCmd().CombinedOutput(); err != nil {
		t.Fatalf("the collect once MariaDB is back: %v\n%s", err, out)
	}
	if n, distinct := storeJobs(t, store); n != jobs || distinct != jobs {
		t.Errorf("the store holds %d jobs (%d distinct), want %d", n, distinct, jobs)
	}
	assertJobs(t, live, jobs)
}
