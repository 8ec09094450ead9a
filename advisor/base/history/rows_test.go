package history

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// Every value reaches its column as bound: numbers as SQLite's integers
// and reals, texts as text ("" included), and what accounting did not give
// as NULL, for a job with every field and one with most unknown.
func TestImportStoresEachValueAsBound(t *testing.T) {
	s := openTemp(t)
	record := func(values map[string]string) string {
		fields := make([]string, len(slurm.SacctFields))
		for i, f := range slurm.SacctFields {
			fields[i] = values[f]
		}
		return strings.Join(fields, "|") + "\n"
	}
	tres := "cpu=2,gres/gpu:a100_20g=1,gres/gpu=1,mem=8G,node=1"
	full := record(map[string]string{"JobIDRaw": "50", "JobID": "50_3", "Cluster": "c1", "User": "u", "Account": "a",
		"Partition": "gpu", "QOS": "normal", "State": "CANCELLED by 42", "ExitCode": "0:15", "Submit": "2026-11-21T01:00:00",
		"Start": "2026-11-21T01:00:01", "End": "2026-11-21T01:10:01", "ElapsedRaw": "600", "TimelimitRaw": "0", "NNodes": "1",
		"AllocCPUS": "2", "ReqMem": "8G", "AllocTRES": tres, "ReqTRES": tres, "NodeList": "vm", "WorkDir": "/w", "JobName": "train"}) +
		record(map[string]string{"JobIDRaw": "50.batch", "JobID": "50_3.batch", "State": "CANCELLED", "NTasks": "2", "MaxRSS": "1536K"})
	unknown := record(map[string]string{"JobIDRaw": "51", "JobID": "51", "Cluster": "c1", "User": "u", "State": "PENDING",
		"Submit": "Unknown", "Start": "Unknown", "End": "None", "TimelimitRaw": "Partition_Limit", "ReqTRES": "cpu=1,mem=1G"})
	importText(t, s, strings.Join(slurm.SacctFields, "|")+"\n"+full+unknown)
	submit := fmt.Sprint(time.Date(2026, 11, 21, 1, 0, 0, 0, time.Local).Unix()) // sacct's times are local
	cases := []struct {
		key, column, typ, value string
	}{
		{"50", "job_id", "text", "50_3"},
		{"50", "array_job", "text", "50"},
		{"50", "cancelled_by", "text", "42"},
		{"50", "exit_code", "integer", "0"},
		{"50", "exit_signal", "integer", "15"},
		{"50", "submit", "integer", submit},
		{"50", "elapsed_s", "integer", "600"},
		{"50", "timelimit_min", "integer", "0"}, // unlimited
		{"50", "req_mem_mib", "real", "8192.0"},
		{"50", "max_rss_mib", "real", "3.0"}, // 1536K a task, 2 tasks
		{"50", "gpu_type", "text", "a100_20g"},
		{"50", "gpu_count", "integer", "1"},
		{"50", "profile", "text", "2g.20gb"},
		{"50", "gpu_mem_mib", "null", ""},
		{"50", "stub", "integer", "0"},
		{"50", "unsettled", "integer", "0"},
		{"50", "jobstats_peak_mib", "null", ""},
		{"51", "name", "text", ""},
		{"51", "cancelled_by", "text", ""},
		{"51", "exit_code", "null", ""},
		{"51", "submit", "null", ""},
		{"51", "elapsed_s", "null", ""},
		{"51", "timelimit_min", "null", ""}, // the partition's
		{"51", "nodes", "null", ""},
		{"51", "req_mem_mib", "real", "1024.0"}, // from ReqTRES
		{"51", "gpu_count", "integer", "0"},
		{"51", "unsettled", "integer", "1"},
	}
	for _, c := range cases {
		var typ, value string
		q := `SELECT typeof(` + c.column + `), coalesce(CAST(` + c.column + ` AS TEXT), '') FROM jobs WHERE job_key = ?`
		if err := s.db.QueryRow(q, c.key).Scan(&typ, &value); err != nil {
			t.Fatal(err)
		}
		if typ != c.typ || value != c.value {
			t.Errorf("job %s %s: %s %q, want %s %q", c.key, c.column, typ, value, c.typ, c.value)
		}
	}
}

// The import runs without the outbox's triggers while the outbox is off,
// and with them while it is on: a history sent to a site store notes every
// job an import writes, new or changed, and one that is not turns the
// triggers back on for what follows.
func TestImportKeepsTheOutboxWhileItIsOn(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	gen := func(first, n int) string {
		b := new(strings.Builder)
		r := sacctgen.NewFrom(first, n, "|")
		buf := make([]byte, 4096)
		for {
			k, err := r.Read(buf)
			b.Write(buf[:k])
			if err != nil {
				return b.String()
			}
		}
	}
	importText(t, s, gen(sacctgen.FirstJobID, 10))
	if n, _ := s.OutboxLen(ctx); n != 0 {
		t.Fatalf("outbox off: %d changes noted", n)
	}
	if _, err := s.KeepOutbox(ctx, "site"); err != nil {
		t.Fatal(err)
	}
	b, err := s.OutboxBatch(ctx, 0, 1000)
	if err != nil || s.OutboxSent(ctx, b.Through) != nil {
		t.Fatal(err)
	}
	// Jobs 5-9 again, as they were (nothing to note), and 10-14, new.
	if st := importText(t, s, gen(sacctgen.FirstJobID+5, 10)); st.New != 5 || st.Unchanged != 5 {
		t.Fatalf("second import: %+v", st)
	}
	if n, _ := s.OutboxLen(ctx); n != 5 {
		t.Errorf("outbox on: %d changes noted for 5 new jobs", n)
	}
	if _, err := s.db.Exec(`UPDATE jobs SET state = 'FAILED' WHERE job_key = ?`, "1000000"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.OutboxLen(ctx); n != 6 {
		t.Errorf("after the imports, an update noted %d changes in all, want 6", n)
	}
}

// The import turns off every trigger on jobs while the outbox is off: the
// outbox's must be the only ones.
func TestOnlyTheOutboxHasTriggers(t *testing.T) {
	s := openTemp(t)
	rows, err := s.db.Query(`SELECT name FROM sqlite_master WHERE type = 'trigger' AND name NOT LIKE 'outbox\_%' ESCAPE '\'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		rows.Scan(&name)
		t.Errorf("trigger %s: the import turns it off with the outbox's (writeBatch)", name)
	}
}

// A row SQLite refuses fails the import with SQLite's error, naming the
// job; its batch is rolled back, those before it kept.
func TestImportNamesTheJobSQLiteRefused(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if _, err := s.KeepOutbox(ctx, "site"); err != nil { // triggers run: the refusal below is one
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`CREATE TEMP TRIGGER refuse BEFORE INSERT ON jobs WHEN NEW.job_key = '9' BEGIN
		SELECT RAISE(ABORT, 'job 9 refused'); END`); err != nil {
		t.Fatal(err)
	}
	s.db.SetMaxOpenConns(1) // the temporary trigger is the connection's
	r, err := slurm.NewSacctReader(strings.NewReader(devDump(t)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.ImportJobs(ctx, r.Next, testOptions())
	var se sqlite3.Error
	if err == nil || !strings.Contains(err.Error(), "import: job 9+0: job 9 refused") || !errors.As(err, &se) || se.Code != sqlite3.ErrConstraint {
		t.Fatalf("import: %v", err)
	}
	if n := countJobs(t, s); n != 4 {
		t.Errorf("%d jobs kept, want the batch of 4 before job 9's", n)
	}
}
