package history

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

// A user's history, its WAL and shared-memory files, and its spool are
// theirs alone, whatever the umask; a shared (site-wide) one is readable
// by all and writable by its owner.
func TestHistoryFileModes(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	for _, tc := range []struct {
		shared            bool
		dirMode, fileMode os.FileMode
	}{{false, 0o700, 0o600}, {true, 0o755, 0o644}} {
		path := filepath.Join(root, fmt.Sprint(tc.shared), "migadvisor", "history.db")
		s, err := OpenWith(ctx, path, Options{Shared: tc.shared})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.RecordSubmissions(ctx, []Submission{{Cluster: "c", JobID: "1", Fingerprint: "f", Submitted: time.Now()}}); err != nil {
			t.Fatal(err)
		}
		spooled, err := SpoolFor(path).Put(Submission{Cluster: "c", JobID: "2", Fingerprint: "f", Submitted: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]os.FileMode{path: tc.fileMode, path + "-wal": tc.fileMode, path + "-shm": tc.fileMode,
			filepath.Dir(path): tc.dirMode, SpoolFor(path).Dir: 0o700, spooled: 0o600}
		for file, mode := range want {
			info, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != mode {
				t.Errorf("shared %v: %s mode %v, want %v", tc.shared, file, info.Mode().Perm(), mode)
			}
		}
		var journal string
		if err := s.db.QueryRow("PRAGMA journal_mode").Scan(&journal); err != nil || journal != "wal" {
			t.Errorf("journal mode %q, %v; want wal", journal, err)
		}
		if v, err := s.Version(ctx); err != nil || v != SchemaVersion {
			t.Errorf("schema version %d, %v; want %d", v, err, SchemaVersion)
		}
	}
}

// A site-wide history is readable by all whatever the umask of the admin
// who runs collect (077 under many sudo setups), and one made private
// before is repaired when it is opened as shared.
func TestSharedHistoryIsReadableUnderAStrictUmask(t *testing.T) {
	ctx := context.Background()
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	root := t.TempDir()
	path := filepath.Join(root, "site", "migadvisor", "site.db")
	private, err := OpenWith(ctx, path, Options{}) // a collect that did not know it was the site's
	if err != nil {
		t.Fatal(err)
	}
	private.Close()
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Fatalf("private history mode %v", info.Mode().Perm())
	}
	shared, err := OpenWith(ctx, path, Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	shared.Close()
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		if info, err := os.Stat(f); err != nil || info.Mode().Perm()&0o044 != 0o044 {
			t.Errorf("%s: %v, not readable by all", f, err)
		}
	}
	fresh := filepath.Join(root, "new", "a", "b", "site.db")
	s, err := OpenWith(ctx, fresh, Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, d := range []string{filepath.Join(root, "new"), filepath.Join(root, "new", "a"), filepath.Dir(fresh)} {
		if info, _ := os.Stat(d); info.Mode().Perm() != 0o755 {
			t.Errorf("%s mode %v under umask 077, want 0755", d, info.Mode().Perm())
		}
	}
	for _, f := range []string{fresh, fresh + "-wal", fresh + "-shm"} {
		if info, err := os.Stat(f); err != nil || info.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v mode, want 0644", f, err)
		}
	}
}

func TestReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	sw := Sweep{Dir: "/d", Script: "/job.sh", Fingerprint: "abc", Site: "wulver", Created: time.Unix(1000, 0),
		Variants: []Variant{{"1g.10gb", "1g.10gb.sh", "--gres=gpu:a100_10g:1", "job-1g.10gb"}}}
	if err := s.RecordSweep(ctx, sw); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Sweeps(ctx, "abc")
	if err != nil || len(got) != 1 || got[0].Dir != "/d" || len(got[0].Variants) != 1 || got[0].Variants[0].Request != "--gres=gpu:a100_10g:1" {
		t.Errorf("after reopening: %+v, %v", got, err)
	}
}

func TestRecordSweepAgainReplaces(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first := Sweep{Dir: "/d", Script: "/a/job.sh", Fingerprint: "f1", Site: "wulver", Created: time.Unix(1000, 0),
		Variants: []Variant{{"1g.10gb", "1g.10gb.sh", "r1", "j1"}, {"full", "full.sh", "r2", "j2"}}}
	again := first
	again.Script, again.Created, again.Variants = "/b/job.sh", time.Unix(2000, 0), first.Variants[:1]
	other := Sweep{Dir: "/e", Script: "/b/job.sh", Fingerprint: "f1", Site: "wulver", Created: time.Unix(3000, 0)}
	for _, sw := range []Sweep{first, again, other} {
		if err := s.RecordSweep(ctx, sw); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Sweeps(ctx, "f1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Dir != "/e" || got[1].Dir != "/d" || len(got[1].Variants) != 1 || got[1].Script != "/b/job.sh" {
		t.Errorf("sweeps %+v", got)
	}
}

// A history written by the previous schema opens, migrated, with its rows.
func TestOlderSchemaIsMigrated(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:2] {
		if _, err := db.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`PRAGMA user_version = 2; INSERT INTO outputs(cluster, job_key, path, size, mtime, truncated, host_oom, time_limit, cancelled, gpu_peak_mib)
		VALUES ('c', '7', '/o', 1, 1, 0, 0, 0, 0, 4096)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var peak float64
	var used sql.NullFloat64
	if err := s.db.QueryRow(`SELECT gpu_peak_mib, gpu_used_peak_mib FROM outputs WHERE job_key = '7'`).Scan(&peak, &used); err != nil || peak != 4096 || used.Valid {
		t.Errorf("migrated row: peak %v used %v err %v", peak, used, err)
	}
	if v, _ := s.Version(ctx); v != SchemaVersion {
		t.Errorf("version %d, want %d", v, SchemaVersion)
	}
	// goose, which ran the migrations after schema 2, records every one,
	// those before it too, each once.
	if got := appliedVersions(t, s); got != fmt.Sprint(versionsThrough(SchemaVersion)) {
		t.Errorf("goose's record: %s", got)
	}
}

// A new history's migrations are goose's, each recorded once.
func TestNewHistoryRecordsItsMigrations(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := appliedVersions(t, s); got != fmt.Sprint(versionsThrough(SchemaVersion)) {
		t.Errorf("goose's record: %s", got)
	}
}

func appliedVersions(t *testing.T, s *Store) string {
	t.Helper()
	rows, err := s.db.Query(`SELECT version_id FROM migadvisor_schema WHERE is_applied ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		rows.Scan(&v)
		vs = append(vs, v)
	}
	return fmt.Sprint(vs)
}

func versionsThrough(n int) []int {
	vs := make([]int, n+1)
	for i := range vs {
		vs[i] = i
	}
	return vs
}

// memUtilLine is a monitor's line with the memory utilization (mem_util).
const memUtilLine = "MIGADVISOR_GPU peak_mib=30100 used_peak_mib=30500 total_mib=81559 samples=120 scope=tree util=mean:43,max:98 mem_util=mean:21,max:60 device=NVIDIA H100 80GB HBM3\n"

// recordLine records the evidence of a job output holding text.
func recordLine(t *testing.T, s *Store, cluster, key, text string) {
	t.Helper()
	ev, err := slurm.ScanOutput(strings.NewReader(text), slurm.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RecordOutput(context.Background(), cluster, key, "/o/"+key, int64(len(text)), time.Unix(1, 0), ev); err != nil {
		t.Fatal(err)
	}
}

// memUtils is each record's memory utilization (GPUMemUtilizationPct, its
// maximum) and GPU utilization, by job id.
func memUtils(recs []JobRecord) map[string]string {
	out := map[string]string{}
	for _, r := range recs {
		out[r.JobID] = fmt.Sprintf("mem %v max %v gpu %v", figure(r.GPUMemUtilizationPct()), figure(r.MonitorMemUtilMax), figure(r.GPUUtilizationPct()))
	}
	return out
}

func figure(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// A history written by the previous schema, before the memory utilization,
// is migrated: its outputs keep their figures, the memory utilization
// unknown; the outputs recorded since keep theirs.
func TestSchemaBeforeMemoryUtilizationIsMigrated(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:schemaMemUtil-1] {
		if _, err := db.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(fmt.Sprintf(`PRAGMA user_version = %d; INSERT INTO outputs(cluster, job_key, path, size, mtime, truncated,
		host_oom, time_limit, cancelled, gpu_peak_mib, gpu_util, gpu_util_mean, gpu_util_max, gpu_source)
		VALUES ('migdev', '4243', '/o/4243', 1, 1, 0, 0, 0, 0, 4096, 'supported', 40, 90, 'line')`, schemaMemUtil-1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, _ := s.Version(ctx); v != SchemaVersion {
		t.Errorf("version %d, want %d", v, SchemaVersion)
	}
	importAs(t, s, "migdev", noClusterDump)
	recordLine(t, s, "migdev", "4242", memUtilLine)
	recs, err := s.History(ctx, HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"4242": "mem 21 max 60 gpu 43", "4243": "mem <nil> max <nil> gpu 40"}
	if got := memUtils(recs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("migrated history: %v, want %v", got, want)
	}
}

// A history of the previous schema that this user cannot migrate (a
// site-wide one) is read read-only: its runs, with no memory utilization.
func TestReadOnlyReadsTheSchemaBeforeMemoryUtilization(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	w, err := OpenWith(ctx, path, Options{BusyTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Fill it as the older one did (its other tables are the same), then put the schema back.
	importAs(t, w, "migdev", noClusterDump)
	recordLine(t, w, "migdev", "4242", memUtilLine)
	if _, err := w.db.Exec(fmt.Sprintf(`ALTER TABLE outputs DROP COLUMN gpu_mem_util_mean; ALTER TABLE outputs DROP COLUMN gpu_mem_util_max;
		PRAGMA user_version = %d`, schemaMemUtil-1)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	ro, err := OpenWith(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	recs, err := ro.History(ctx, HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"4242": "mem <nil> max <nil> gpu 43", "4243": "mem <nil> max <nil> gpu <nil>"}
	if got := memUtils(recs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("read-only history of schema %d: %v, want %v", schemaMemUtil-1, got, want)
	}
}

// A history of a newer schema is refused, by every way of opening it, in
// one sentence that says the way out, and left as it is: not a byte of it
// changes (the open that refused it once turned on WAL, rewriting its
// header) and nothing is made beside it.
func TestNewerSchemaIsRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 999; CREATE TABLE jobs(x)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)
	_, errRW := Open(ctx, path)
	_, errRO := OpenWith(ctx, path, Options{ReadOnly: true})
	_, _, errRead := OpenToRead(ctx, path)
	for name, err := range map[string]error{"read-write": errRW, "read-only": errRO, "to read": errRead} {
		if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), "(schema 999; this one reads up to") ||
			!strings.Contains(err.Error(), "use that migadvisor, or a newer one, with it") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the newer history changed")
	}
	if left, _ := filepath.Glob(path + "?*"); len(left) > 0 {
		t.Errorf("left beside it: %v", left)
	}
}

func TestOpenFailsClearly(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o600)
	if _, err := Open(context.Background(), filepath.Join(blocker, "history.db")); err == nil {
		t.Error("opened a database under a regular file")
	}
}

// A new history has pages of pageSize and is in WAL mode; one made with
// SQLite's default pages (by an earlier migadvisor) keeps them, and its
// jobs, when it is opened and written again.
func TestANewHistoryHasLargePagesAndAnOldOneKeepsItsOwn(t *testing.T) {
	ctx := context.Background()
	value := func(path, query string) string {
		db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var v string
		if err := db.QueryRow(query).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	fresh := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got := value(fresh, "PRAGMA page_size"); got != fmt.Sprint(pageSize) {
		t.Errorf("a new history's page size is %s, want %d", got, pageSize)
	}
	if got := value(fresh, "PRAGMA journal_mode"); got != "wal" {
		t.Errorf("a new history's journal mode is %s", got)
	}

	old := filepath.Join(t.TempDir(), "history.db")
	db, err := sql.Open("sqlite3", "file:"+old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; CREATE TABLE t(a); DROP TABLE t"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for range 2 {
		s, err := Open(ctx, old)
		if err != nil {
			t.Fatal(err)
		}
		importText(t, s, "JobIDRaw|JobID|User|State|ReqTRES|JobName\n7|7|ann|COMPLETED|cpu=1|a\n")
		s.Close()
	}
	if got := value(old, "PRAGMA page_size"); got != "4096" {
		t.Errorf("a history of 4 KiB pages has %s after it was written", got)
	}
	if got := value(old, "SELECT count(*) FROM jobs"); got != "1" {
		t.Errorf("the old history holds %s jobs", got)
	}
}
