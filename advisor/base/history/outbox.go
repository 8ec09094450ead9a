package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A collector whose site keeps its history in MariaDB keeps its own
// history as well, and that history is the site store's outbox: while it
// is on (KeepOutbox), triggers note the key of every row written or
// deleted, in every table, in the order written. OutboxBatch reads the
// changes as the rows are now (a row since deleted is a deletion), and
// OutboxSent drops them once the site store has committed them. A push cut
// short (the server stopped, the connection lost) leaves them for the next,
// and sending a row twice changes nothing: nothing committed is lost.

// OutboxTable is a table whose changes go to the site store, and its key.
type OutboxTable struct {
	Name string
	Key  []string
}

// outboxTables12 are the tables of schema 12 and their keys: what its
// migration makes triggers for. Never edit it: a table added later gets its
// triggers in its own migration (outboxTriggers), and joins OutboxTables.
var outboxTables12 = []OutboxTable{
	{"scripts", []string{"fingerprint"}},
	{"sweeps", []string{"id"}},
	{"variants", []string{"sweep_id", "profile"}},
	{"jobs", []string{"cluster", "job_key"}},
	{"submissions", []string{"cluster", "job_id"}},
	{"outputs", []string{"cluster", "job_key"}},
	{"unscripted", []string{"cluster", "job_key"}},
	{"watermarks", []string{"scope"}},
	{"settings", []string{"key"}},
	{"script_names", []string{"name", "user", "fingerprint"}},
	{"emulated_runs", []string{"cluster", "job_key", "profile"}},
}

// OutboxTables are every table of the history a site store holds, in an
// order in which each is written after those it refers to. A table added
// later joins it, and the migration that makes the table makes its
// triggers too (outboxTriggers); a table of the schema that is neither
// here nor one of localTables (outbox_test.go) fails its test.
var OutboxTables = outboxTables12

// outboxMigration is migration 12: the outbox, and the triggers of
// outboxTables12. Its text is the one shipped, byte for byte (outbox_test.go
// checks its hash): a history's sqlite_master keeps it.
var outboxMigration = `CREATE TABLE outbox (
		seq INTEGER PRIMARY KEY, -- the order the changes were made in
		tbl TEXT NOT NULL,       -- the table changed
		k1, k2, k3               -- the key of the row written or deleted
	);
	CREATE TABLE outbox_on (
		store TEXT NOT NULL      -- the site store the changes go to (a row: on; none: off)
	);
` + outboxTriggers(outboxTables12...)

// outboxTriggers are the triggers that note, while the outbox is on, the
// key of each row of tables inserted, updated or deleted: three a table,
// named outbox_<table>_<insert|update|delete>. They are built at start-up
// (migration 12 is), in every program that links this package, the sbatch
// wrapper's too: one allocation and appends, some 30 µs.
func outboxTriggers(tables ...OutboxTable) string {
	var b strings.Builder
	b.Grow(len(tables) * 3 * 210) // a trigger is about 200 bytes
	w := func(parts ...string) {
		for _, p := range parts {
			b.WriteString(p)
		}
	}
	for _, t := range tables {
		for _, ev := range [...]struct{ name, when, row string }{{"insert", "INSERT", "NEW."}, {"update", "UPDATE", "NEW."}, {"delete", "DELETE", "OLD."}} {
			w("\tCREATE TRIGGER outbox_", t.Name, "_", ev.name, " AFTER ", ev.when, " ON ", t.Name,
				" WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN\n\t\tINSERT INTO outbox(tbl")
			for i := range t.Key {
				w(", k", strconv.Itoa(i+1))
			}
			w(") VALUES ('", t.Name, "'")
			for _, c := range t.Key {
				w(", ", ev.row, c)
			}
			w("); END;\n")
		}
	}
	return b.String()
}

// KeepOutbox turns the outbox on for the site store named store, and
// returns how many rows it holds. Turned on for the first time, or for
// another store, every row of the history goes in: the store gets the
// history whole.
func (s *Store) KeepOutbox(ctx context.Context, store string) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("outbox: %w", err)
	}
	defer tx.Rollback()
	var current string
	err = tx.QueryRowContext(ctx, `SELECT store FROM outbox_on`).Scan(&current)
	if err != nil && err != sql.ErrNoRows {
		return 0, fmt.Errorf("outbox: %w", err)
	}
	if err == sql.ErrNoRows || current != store {
		if _, err := tx.ExecContext(ctx, `DELETE FROM outbox; DELETE FROM outbox_on; INSERT INTO outbox_on(store) VALUES (?)`, store); err != nil {
			return 0, fmt.Errorf("outbox: %w", err)
		}
		for _, t := range OutboxTables {
			q := fmt.Sprintf(`INSERT INTO outbox(tbl, %s) SELECT '%s', %s FROM %s`, keyColumns(len(t.Key)), t.Name, strings.Join(t.Key, ", "), t.Name)
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return 0, fmt.Errorf("outbox: %s: %w", t.Name, err)
			}
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM outbox`).Scan(&n); err != nil {
		return 0, fmt.Errorf("outbox: %w", err)
	}
	return n, tx.Commit()
}

// keyColumns are the outbox's key columns for a key of n columns: "k1, k2".
func keyColumns(n int) string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = fmt.Sprintf("k%d", i+1)
	}
	return strings.Join(ks, ", ")
}

// OutboxBatch is the changes of one push: each table's rows as they are
// now, and the keys of those deleted since.
type OutboxBatch struct {
	Through int64 // the last change it holds: OutboxSent's argument
	Changes int   // how many changes it holds
	Tables  []TableChanges
}

// TableChanges are one table's rows to write and keys to delete.
type TableChanges struct {
	OutboxTable
	Columns []string // of Rows, in the table's order
	Rows    [][]any
	Deleted [][]any // keys, in Key's order
}

// OutboxBatch reads the changes after the one numbered after (0: from the
// first), up to limit of them (a row changed twice is sent once), oldest
// first; a batch with no changes: none left. A pusher may read the next
// batch while it sends this one.
func (s *Store) OutboxBatch(ctx context.Context, after int64, limit int) (*OutboxBatch, error) {
	b := &OutboxBatch{}
	err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0), count(*) FROM (SELECT seq FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?)`, after, limit).
		Scan(&b.Through, &b.Changes)
	if err != nil || b.Changes == 0 {
		return b, wrapOutbox(err)
	}
	touched, err := s.touchedTables(ctx, after, b.Through)
	if err != nil {
		return nil, wrapOutbox(err)
	}
	for _, t := range OutboxTables {
		if !touched[t.Name] {
			continue
		}
		tc, err := s.tableChanges(ctx, t, after, b.Through)
		if err != nil {
			return nil, wrapOutbox(fmt.Errorf("%s: %w", t.Name, err))
		}
		if len(tc.Rows) > 0 || len(tc.Deleted) > 0 {
			b.Tables = append(b.Tables, tc)
		}
	}
	return b, nil
}

// touchedTables are the tables with changes after seq after up to through.
func (s *Store) touchedTables(ctx context.Context, after, through int64) (map[string]bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT tbl FROM outbox WHERE seq > ? AND seq <= ?`, after, through)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out[t] = true
	}
	return out, rows.Err()
}

func wrapOutbox(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("outbox: %w", err)
}

// tableChanges are table t's changes after seq after up to seq through: the
// rows that are there (written), and the keys that are not (deleted), in
// one pass over the changed keys.
func (s *Store) tableChanges(ctx context.Context, t OutboxTable, after, through int64) (TableChanges, error) {
	tc := TableChanges{OutboxTable: t}
	nk := len(t.Key)
	var on, okeys []string
	for i, c := range t.Key {
		on = append(on, fmt.Sprintf("t.%s = o.k%d", c, i+1))
		okeys = append(okeys, fmt.Sprintf("o.k%d", i+1))
	}
	changed := fmt.Sprintf(`(SELECT DISTINCT %s FROM outbox WHERE tbl = '%s' AND seq > ? AND seq <= ?) o`, keyColumns(nk), t.Name)
	// t's key is NOT NULL: a NULL one is a key no row has any more.
	rows, err := s.db.QueryContext(ctx, fmt.Sprintf(`SELECT %s, t.%s IS NULL, t.* FROM %s LEFT JOIN %s t ON %s`,
		strings.Join(okeys, ", "), t.Key[0], changed, t.Name, strings.Join(on, " AND ")), after, through)
	if err != nil {
		return tc, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return tc, err
	}
	tc.Columns = cols[nk+1:]
	for rows.Next() {
		vals, err := ScanRow(rows, len(cols))
		if err != nil {
			return tc, err
		}
		gone, ok := vals[nk].(int64)
		if !ok {
			return tc, fmt.Errorf("%s: the key test read as %T, not an integer", t.Name, vals[nk])
		}
		if gone == 1 {
			tc.Deleted = append(tc.Deleted, vals[:nk])
		} else {
			tc.Rows = append(tc.Rows, vals[nk+1:])
		}
	}
	return tc, rows.Err()
}

// ScanRow reads the current row of rows, of n columns, as values: the
// rows of one database written into another.
func ScanRow(rows *sql.Rows, n int) ([]any, error) {
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	return vals, rows.Scan(ptrs...)
}

// OutboxSent drops the changes up to seq through, which the site store has
// committed.
func (s *Store) OutboxSent(ctx context.Context, through int64) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM outbox WHERE seq <= ?`, through)
	return wrapOutbox(err)
}

// LockOutbox holds the outbox for one push until unlock: two pushes from
// one history (two collects that overlap, each sending what it imports)
// take turns. Otherwise one could read a batch, the other overtake it with
// a newer version of a row of it, and the first then write its older row
// over it, while the outbox, emptied by both, held nothing to mend it. It
// waits for the push that holds it, or for ctx. The lock is a file beside
// the history (PATH.pushing), which stays.
func (s *Store) LockOutbox(ctx context.Context) (unlock func(), err error) {
	if s.inMemory {
		return func() {}, nil
	}
	f, err := os.OpenFile(s.path+".pushing", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing releases it
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("outbox: lock %s: %w", f.Name(), err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// OutboxLen is how many changes wait in the outbox.
func (s *Store) OutboxLen(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM outbox`).Scan(&n)
	return n, wrapOutbox(err)
}

// LoadTable writes rows of table (columns cols) into the history in one
// transaction, replacing rows of the same key: a site store copied into a
// new history, to publish it. Jobs loaded into a history with none have
// their names indexed after (withJobIndexesDeferred).
func (s *Store) LoadTable(ctx context.Context, table string, cols []string, next func() ([]any, bool, error)) (int, error) {
	if !isOutboxTable(table) {
		return 0, fmt.Errorf("load %s: not a table of the history", table)
	}
	if table != "jobs" {
		return s.loadTable(ctx, table, cols, next)
	}
	var n int
	err := s.withJobIndexesDeferred(ctx, func() (err error) {
		n, err = s.loadTable(ctx, table, cols, next)
		return err
	})
	return n, err
}

// loadTable is LoadTable, the index of job names aside.
func (s *Store) loadTable(ctx context.Context, table string, cols []string, next func() ([]any, bool, error)) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("load %s: %w", table, err)
	}
	defer tx.Rollback()
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = `"` + strings.ReplaceAll(c, `"`, `""`) + `"`
	}
	stmt, err := tx.PrepareContext(ctx, fmt.Sprintf(`INSERT OR REPLACE INTO %s(%s) VALUES (%s)`,
		table, strings.Join(quoted, ", "), strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")))
	if err != nil {
		return 0, fmt.Errorf("load %s: %w", table, err)
	}
	defer stmt.Close()
	n := 0
	for {
		vals, ok, err := next()
		if err != nil {
			return n, fmt.Errorf("load %s: %w", table, err)
		}
		if !ok {
			break
		}
		if _, err := stmt.ExecContext(ctx, vals...); err != nil {
			return n, fmt.Errorf("load %s: %w", table, err)
		}
		n++
	}
	return n, tx.Commit()
}

func isOutboxTable(name string) bool {
	return slices.ContainsFunc(OutboxTables, func(t OutboxTable) bool { return t.Name == name })
}
