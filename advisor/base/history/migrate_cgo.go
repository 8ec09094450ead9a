//go:build cgo

package history

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"syscall"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
)

// schemaTable is where goose records the migrations a history has had
// (as in a site store in MariaDB: advisor/base/history/mariadb). PRAGMA
// user_version says the same in the file's header, which every reader
// reads at no cost and older migadvisors check.
const schemaTable = "migadvisor_schema"

// migrate brings the schema to SchemaVersion with goose, each migration in
// a transaction of its own, one process at a time (a lock file beside the
// history: goose locks no SQLite database itself).
func (s *Store) migrate(ctx context.Context) error {
	// Opening an up-to-date history takes no lock: the version is read
	// first, and read again under the lock (another process may have
	// migrated it meanwhile).
	if v, err := s.Version(ctx); err != nil || v == SchemaVersion {
		return err
	}
	if !s.inMemory {
		lock := s.path + ".migrating"
		unlock, err := lockFile(lock)
		if err != nil {
			return fmt.Errorf("lock the schema for its migration: %w", err)
		}
		// The lock file goes with the lock: left, one sat beside every
		// history. Removed while held, it is safe: a process waiting on it
		// reads the version again once it has it, and one that opens the
		// path afresh reads the version the migration left.
		defer func() {
			os.Remove(lock)
			unlock()
		}()
	}
	v, err := s.Version(ctx)
	switch {
	case err != nil:
		return err
	case v > SchemaVersion:
		return newerSchema(v)
	case v == SchemaVersion:
		return nil
	}
	if err := s.adoptSchema(ctx, v); err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, s.db, nil, goose.WithDisableGlobalRegistry(true),
		goose.WithTableName(schemaTable), goose.WithGoMigrations(gooseMigrations()...))
	if err != nil {
		return fmt.Errorf("migrate the schema: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate the schema: %w", err)
	}
	_, err = s.db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion))
	return err
}

// gooseMigrations are the migrations as goose runs them.
func gooseMigrations() []*goose.Migration {
	out := make([]*goose.Migration, len(migrations))
	for i, m := range migrations {
		out[i] = goose.NewGoMigration(int64(i+1), &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, m)
			return err
		}}, nil)
	}
	return out
}

// adoptSchema records in goose's table the migrations a history had before
// goose ran them (schema v in its header, no table of goose's), so that
// goose goes on from there.
func (s *Store) adoptSchema(ctx context.Context, v int) error {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, schemaTable).Scan(&n); err != nil || n > 0 || v == 0 {
		return err
	}
	store, err := database.NewStore(database.DialectSQLite3, schemaTable)
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := store.CreateVersionTable(ctx, tx); err != nil {
		return fmt.Errorf("record schema %d: %w", v, err)
	}
	for version := 0; version <= v; version++ {
		if err := store.Insert(ctx, tx, database.InsertRequest{Version: int64(version)}); err != nil {
			return fmt.Errorf("record schema %d: %w", v, err)
		}
	}
	return tx.Commit()
}

// lockFile holds an exclusive lock on file (made if need be) until unlock.
func lockFile(file string) (unlock func(), err error) {
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil // closing releases it
}
