package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
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
// migration made triggers for. Never edit it: a table added later gets its
// triggers in its own migration, and joins OutboxTables.
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
// order in which each is written after those it refers to.
var OutboxTables = outboxTables12

// outboxMigration is migration 12: the outbox and a trigger for each write
// to each of outboxTables12, written out (outbox_test.go's outboxSchema
// wrote it) so that no program pays for building it at start-up: the sbatch
// wrapper links this package.
const outboxMigration = `CREATE TABLE outbox (
		seq INTEGER PRIMARY KEY, -- the order the changes were made in
		tbl TEXT NOT NULL,       -- the table changed
		k1, k2, k3               -- the key of the row written or deleted
	);
	CREATE TABLE outbox_on (
		store TEXT NOT NULL      -- the site store the changes go to (a row: on; none: off)
	);
	CREATE TRIGGER outbox_scripts_insert AFTER INSERT ON scripts WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1) VALUES ('scripts', NEW.fingerprint); END;
	CREATE TRIGGER outbox_scripts_update AFTER UPDATE ON scripts WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1) VALUES ('scripts', NEW.fingerprint); END;
	CREATE TRIGGER outbox_scripts_delete AFTER DELETE ON scripts WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1) VALUES ('scripts', OLD.fingerprint); END;
	CREATE TRIGGER outbox_sweeps_insert AFTER INSERT ON sweeps WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1) VALUES ('sweeps', NEW.id); END;
	CREATE TRIGGER outbox_sweeps_update AFTER UPDATE ON sweeps WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1) VALUES ('sweeps', NEW.id); END;
	CREATE TRIGGER outbox_sweeps_delete AFTER DELETE ON sweeps WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1) VALUES ('sweeps', OLD.id); END;
	CREATE TRIGGER outbox_variants_insert AFTER INSERT ON variants WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2) VALUES ('variants', NEW.sweep_id, NEW.profile); END;
	CREATE TRIGGER outbox_variants_update AFTER UPDATE ON variants WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2) VALUES ('variants', NEW.sweep_id, NEW.profile); END;
	CREATE TRIGGER outbox_variants_delete AFTER DELETE ON variants WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2) VALUES ('variants', OLD.sweep_id, OLD.profile); END;
	CREATE TRIGGER outbox_jobs_insert AFTER INSERT ON jobs WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2) VALUES ('jobs', NEW.cluster, NEW.job_key); END;
	CREATE TRIGGER outbox_jobs_update AFTER UPDATE ON jobs WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2) VALUES ('jobs', NEW.cluster, NEW.job_key); END;
	CREATE TRIGGER outbox_jobs_delete AFTER DELETE ON jobs WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2) VALUES ('jobs', OLD.cluster, OLD.job_key); END;
	CREATE TRIGGER outbox_submissions_insert AFTER INSERT ON submissions WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2) VALUES ('submissions', NEW.cluster, NEW.job_id); END;
	CREATE TRIGGER outbox_submissions_update AFTER UPDATE ON submissions WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2) VALUES ('submissions', NEW.cluster, NEW.job_id); END;
	CREATE TRIGGER outbox_submissions_delete AFTER DELETE ON submissions WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2) VALUES ('submissions', OLD.cluster, OLD.job_id); END;
	CREATE TRIGGER outbox_outputs_insert AFTER INSERT ON outputs WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2) VALUES ('outputs', NEW.cluster, NEW.job_key); END;
	CREATE TRIGGER outbox_outputs_update AFTER UPDATE ON outputs WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2) VALUES ('outputs', NEW.cluster, NEW.job_key); END;
	CREATE TRIGGER outbox_outputs_delete AFTER DELETE ON outputs WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2) VALUES ('outputs', OLD.cluster, OLD.job_key); END;
	CREATE TRIGGER outbox_unscripted_insert AFTER INSERT ON unscripted WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2) VALUES ('unscripted', NEW.cluster, NEW.job_key); END;
	CREATE TRIGGER outbox_unscripted_update AFTER UPDATE ON unscripted WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2) VALUES ('unscripted', NEW.cluster, NEW.job_key); END;
	CREATE TRIGGER outbox_unscripted_delete AFTER DELETE ON unscripted WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2) VALUES ('unscripted', OLD.cluster, OLD.job_key); END;
	CREATE TRIGGER outbox_watermarks_insert AFTER INSERT ON watermarks WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1) VALUES ('watermarks', NEW.scope); END;
	CREATE TRIGGER outbox_watermarks_update AFTER UPDATE ON watermarks WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1) VALUES ('watermarks', NEW.scope); END;
	CREATE TRIGGER outbox_watermarks_delete AFTER DELETE ON watermarks WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1) VALUES ('watermarks', OLD.scope); END;
	CREATE TRIGGER outbox_settings_insert AFTER INSERT ON settings WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1) VALUES ('settings', NEW.key); END;
	CREATE TRIGGER outbox_settings_update AFTER UPDATE ON settings WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1) VALUES ('settings', NEW.key); END;
	CREATE TRIGGER outbox_settings_delete AFTER DELETE ON settings WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1) VALUES ('settings', OLD.key); END;
	CREATE TRIGGER outbox_script_names_insert AFTER INSERT ON script_names WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2, k3) VALUES ('script_names', NEW.name, NEW.user, NEW.fingerprint); END;
	CREATE TRIGGER outbox_script_names_update AFTER UPDATE ON script_names WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2, k3) VALUES ('script_names', NEW.name, NEW.user, NEW.fingerprint); END;
	CREATE TRIGGER outbox_script_names_delete AFTER DELETE ON script_names WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2, k3) VALUES ('script_names', OLD.name, OLD.user, OLD.fingerprint); END;
	CREATE TRIGGER outbox_emulated_runs_insert AFTER INSERT ON emulated_runs WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2, k3) VALUES ('emulated_runs', NEW.cluster, NEW.job_key, NEW.profile); END;
	CREATE TRIGGER outbox_emulated_runs_update AFTER UPDATE ON emulated_runs WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2, k3) VALUES ('emulated_runs', NEW.cluster, NEW.job_key, NEW.profile); END;
	CREATE TRIGGER outbox_emulated_runs_delete AFTER DELETE ON emulated_runs WHEN EXISTS (SELECT 1 FROM outbox_on) BEGIN
		INSERT INTO outbox(tbl, k1, k2, k3) VALUES ('emulated_runs', OLD.cluster, OLD.job_key, OLD.profile); END;
`

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
// their names indexed after (withNameIndexDeferred).
func (s *Store) LoadTable(ctx context.Context, table string, cols []string, next func() ([]any, bool, error)) (int, error) {
	if !isOutboxTable(table) {
		return 0, fmt.Errorf("load %s: not a table of the history", table)
	}
	if table != "jobs" {
		return s.loadTable(ctx, table, cols, next)
	}
	var n int
	err := s.withNameIndexDeferred(ctx, func() (err error) {
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
