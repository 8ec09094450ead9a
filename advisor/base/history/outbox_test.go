package history

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
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

// Migration 12 is the text shipped, byte for byte, though outboxTriggers
// now builds it from outboxTables12: a history's sqlite_master keeps each
// trigger's text, and a shipped migration never changes. The hash is that
// of the text written out before (commit 86f8c1b).
func TestOutboxMigrationIsAsShipped(t *testing.T) {
	const shipped = "728289739caed49bb352405bc711b9b90ddc70fc64fefcc8d880da19884006e6"
	if got := fmt.Sprintf("%x", sha256.Sum256([]byte(outboxMigration))); got != shipped {
		t.Errorf("migration 12 hashes to %s, not the shipped %s: a shipped migration changed?\n%s", got, shipped, outboxMigration)
	}
}

// localTables are the tables of the history that no site store holds, and
// why.
var localTables = map[string]string{
	"outbox":    "the changes this history has yet to push: the outbox itself",
	"outbox_on": "whether this history pushes, and to which store: its own setting",
	schemaTable: "goose's record of this history's migrations; the store keeps its own record of its own",
	"pending_submissions": "the wrapper's submissions without a job id: only the collect of the history they were " +
		"spooled into links them (LinkPendingWith), and the submission it writes is what the store gets; " +
		"the store's table of that name (its migration 4) is there for the schemas' parity, and stays empty",
}

// Every table of a new history reaches the site store, or is one of
// localTables: a table added to the schema and not to OutboxTables (the
// list Push sends and CopyInto copies back from) fails here. Each has its
// three triggers, as outboxTriggers writes them, keyed on its primary key
// (the key the store replaces and deletes rows by), and comes in
// OutboxTables after the tables it refers to.
func TestEveryTableReachesTheSiteStore(t *testing.T) {
	s := openTemp(t)
	schema := map[string]bool{}
	rows, err := s.db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		schema[name] = true
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	mirrored := map[string]int{} // its place in OutboxTables
	for i, tbl := range OutboxTables {
		mirrored[tbl.Name] = i
		if !schema[tbl.Name] {
			t.Errorf("OutboxTables has %s, which is no table of the history", tbl.Name)
		}
		if _, ok := localTables[tbl.Name]; ok {
			t.Errorf("%s is in OutboxTables and in localTables", tbl.Name)
		}
	}
	for name := range localTables {
		if !schema[name] {
			t.Errorf("localTables has %s, which is no table of the history", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(schema)) {
		_, local := localTables[name]
		if _, ok := mirrored[name]; !ok && !local {
			t.Errorf("table %s never reaches the site store: add it to OutboxTables (its migration making its triggers with outboxTriggers, "+
				"and the store's migrations the table), or to localTables with why", name)
		}
	}
	for _, tbl := range OutboxTables {
		if !schema[tbl.Name] {
			continue
		}
		if pk := primaryKey(t, s, tbl.Name); !slices.Equal(tbl.Key, pk) || len(pk) > 3 {
			t.Errorf("%s: outbox key %v, primary key %v: want them equal, of 3 columns at most (the outbox's k1, k2, k3)", tbl.Name, tbl.Key, pk)
		}
		want := outboxTriggers(tbl)
		var n int
		triggers, err := s.db.Query(`SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? AND name LIKE 'outbox\_%' ESCAPE '\'`, tbl.Name)
		if err != nil {
			t.Fatal(err)
		}
		for triggers.Next() {
			var name, sql string
			if err := triggers.Scan(&name, &sql); err != nil {
				t.Fatal(err)
			}
			n++
			if !strings.Contains(want, "\t"+sql+";\n") {
				t.Errorf("%s: trigger %s is not outboxTriggers'\n%s", tbl.Name, name, sql)
			}
		}
		if err := triggers.Close(); err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Errorf("%s has %d outbox triggers, want 3 (insert, update, delete)", tbl.Name, n)
		}
		for _, parent := range referredTo(t, s, tbl.Name) {
			if i, ok := mirrored[parent]; ok && i > mirrored[tbl.Name] {
				t.Errorf("OutboxTables has %s before %s, which it refers to", tbl.Name, parent)
			}
		}
	}
}

// primaryKey is table's primary key, its columns in the key's order.
func primaryKey(t *testing.T, s *Store, table string) []string {
	t.Helper()
	return queryStrings(t, s, `SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`, table)
}

// referredTo are the tables table's foreign keys refer to.
func referredTo(t *testing.T, s *Store, table string) []string {
	t.Helper()
	return queryStrings(t, s, `SELECT DISTINCT "table" FROM pragma_foreign_key_list(?)`, table)
}

func queryStrings(t *testing.T, s *Store, q string, args ...any) []string {
	t.Helper()
	rows, err := s.db.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
