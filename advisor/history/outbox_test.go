package history

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// A user's history keeps no outbox: only a collector that pushes to a site
// store turns it on.
func TestOutboxIsOffByDefault(t *testing.T) {
	s := openTemp(t)
	importText(t, s, devDump(t))
	if n, err := s.OutboxLen(context.Background()); err != nil || n != 0 {
		t.Errorf("outbox of a history that pushes nowhere: %d, %v", n, err)
	}
}

// Turned on, the outbox takes the history whole, then every write and
// delete after; a batch gives the rows as they are now and the keys of
// those gone, each once, and is dropped once sent.
func TestOutboxKeepsEveryChange(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	importText(t, s, devDump(t))
	jobs := countJobs(t, s)
	n, err := s.KeepOutbox(ctx, "site")
	if err != nil || n < jobs {
		t.Fatalf("outbox on: %d changes (%v) for %d jobs", n, err, jobs)
	}
	if again, _ := s.KeepOutbox(ctx, "site"); again != n {
		t.Errorf("turned on again for the same store: %d changes, want the %d waiting", again, n)
	}
	b, err := s.OutboxBatch(ctx, 0, n)
	if err != nil || b.Changes != n || len(batchRows(b, "jobs")) != jobs {
		t.Fatalf("first batch: %+v, %v", b, err)
	}
	if err := s.OutboxSent(ctx, b.Through); err != nil {
		t.Fatal(err)
	}
	var gone, changed string
	s.db.QueryRow(`SELECT job_key FROM jobs ORDER BY job_key LIMIT 1`).Scan(&gone)
	s.db.QueryRow(`SELECT job_key FROM jobs ORDER BY job_key DESC LIMIT 1`).Scan(&changed)
	if _, err := s.db.Exec(`DELETE FROM jobs WHERE job_key = ?; UPDATE jobs SET state = 'FAILED' WHERE job_key = ?; UPDATE jobs SET state = 'COMPLETED' WHERE job_key = ?`,
		gone, changed, changed); err != nil {
		t.Fatal(err)
	}
	b, err = s.OutboxBatch(ctx, 0, 100)
	if err != nil || b.Changes != 3 {
		t.Fatalf("after a delete and two updates: %+v, %v", b, err)
	}
	rows, deleted := batchRows(b, "jobs"), batchDeleted(b, "jobs")
	if len(rows) != 1 || len(deleted) != 1 || fmt1(deleted[0][1]) != gone {
		t.Errorf("rows %v, deleted %v: want %s written once and %s deleted", rows, deleted, changed, gone)
	}
	if err := s.OutboxSent(ctx, b.Through); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.OutboxLen(ctx); n != 0 {
		t.Errorf("%d changes left after sending them all", n)
	}
	if n, _ := s.KeepOutbox(ctx, "another site"); n < jobs-1 {
		t.Errorf("turned on for another store: %d changes, want the whole history again", n)
	}
}

func batchRows(b *OutboxBatch, table string) [][]any {
	for _, t := range b.Tables {
		if t.Name == table {
			return t.Rows
		}
	}
	return nil
}

func batchDeleted(b *OutboxBatch, table string) [][]any {
	for _, t := range b.Tables {
		if t.Name == table {
			return t.Deleted
		}
	}
	return nil
}

func fmt1(v any) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	s, _ := v.(string)
	return s
}

// Migration 12, written out, is the outbox of schema 12's tables.
func TestOutboxMigrationIsItsTables(t *testing.T) {
	if outboxSchema(outboxTables12) != outboxMigration {
		t.Error("outboxMigration is not outboxSchema(outboxTables12): a shipped migration changed?")
	}
}

// outboxSchema is the outbox and its triggers for tables.
func outboxSchema(tables []OutboxTable) string {
	var b strings.Builder
	b.WriteString(`CREATE TABLE outbox (
		seq INTEGER PRIMARY KEY, -- the order the changes were made in
		tbl TEXT NOT NULL,       -- the table changed
		k1, k2, k3               -- the key of the row written or deleted
	);
	CREATE TABLE outbox_on (
		store TEXT NOT NULL      -- the site store the changes go to (a row: on; none: off)
	);
`)
	for _, t := range tables {
		for _, ev := range []struct{ name, row string }{{"insert", "NEW"}, {"update", "NEW"}, {"delete", "OLD"}} {
			var ks, vs []string
			for i, c := range t.Key {
				ks, vs = append(ks, fmt.Sprintf("k%d", i+1)), append(vs, ev.row+"."+c)
			}
			fmt.Fprintf(&b, "\tCREATE TRIGGER outbox_%s_%s AFTER %s ON %s WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN\n\t\tINSERT INTO outbox(tbl, %s) VALUES ('%s', %s); END;\n",
				t.Name, ev.name, strings.ToUpper(ev.name), t.Name, strings.Join(ks, ", "), t.Name, strings.Join(vs, ", "))
		}
	}
	return b.String()
}
