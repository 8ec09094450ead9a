package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/migadvisor/migadvisor/slurm"
)

// NoHistoryError says why a command that only reads reads no history:
// there is none at Path, and none can be created there (a read-only home
// directory, a parent that is a file).
type NoHistoryError struct {
	Path string
	Err  error
}

func (e *NoHistoryError) Error() string {
	return fmt.Sprintf("no history at %s, and none can be created there: %v", e.Path, e.Err)
}

func (e *NoHistoryError) Unwrap() error { return e.Err }

// CorruptError is a history file SQLite cannot read as a database: one
// sentence that names it and says how to recover.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("the history %s is damaged (%v): move it aside (mv %s %s.broken) and run 'migadvisor collect', which rebuilds its jobs from Slurm accounting",
		e.Path, e.Err, e.Path, e.Path)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// asCorrupt turns SQLite's "not a database" and "malformed" errors on the
// history at path into a *CorruptError; other errors are left as they are.
func asCorrupt(path string, err error) error {
	if se, ok := sqliteError(err, codeNotADB, codeCorrupt); ok {
		return &CorruptError{Path: path, Err: se}
	}
	return err
}

// FullError is a write to the history that failed because its file
// system is full: one sentence that names it and says how to recover.
// SQLite rolled the transaction back: what was committed before is kept.
type FullError struct {
	Path string
	Err  error
}

func (e *FullError) Error() string {
	return fmt.Sprintf("the history %s could not be written, its file system is full (%v): what was committed before is kept; free room there and run the command again, which goes on from there",
		e.Path, e.Err)
}

func (e *FullError) Unwrap() error { return e.Err }

// Explain turns SQLite's errors about the history file at path, wherever
// they arise (a page found damaged in the middle of an import, a disk that
// fills up), into the one sentence that names the file and says the way
// out (*CorruptError, *FullError), in place of what the error said of the
// work it cut short (the dump being imported, an index made after); other
// errors are left as they are.
func Explain(path string, err error) error {
	var corrupt *CorruptError
	var full *FullError
	if errors.As(err, &corrupt) || errors.As(err, &full) {
		return err
	}
	if se, ok := sqliteError(err, codeFull); ok {
		return &FullError{Path: path, Err: se}
	}
	return asCorrupt(path, err)
}

// Explain is Explain of an error of s's.
func (s *Store) Explain(err error) error {
	if err == nil || s.inMemory {
		return err
	}
	return Explain(s.path, err)
}

// OpenToRead opens the history at path for a command that only reads it,
// read-only: a read never writes. Its schema is not migrated (one older
// than this build's is read as it is, down to oldestReadable; one older
// still is an *OldSchemaError, which says what to run), and the wrapper's
// spooled submissions are not moved in: Tracked lists those with their
// job ids beside the history's, read from the spool as they are; the next
// collect moves them in. Anyone who may read the file can read it (a
// site-wide history that root fills, in a directory only root writes).
// Where there is no history, a read creates none: it returns an empty
// history (in memory: every read finds nothing but the spooled
// submissions), with absent saying why where none could be created either
// (a read-only home, a parent that is a file), so that the command can say
// where to point it; a command reads nothing rather than fail. The Open
// OnDemand form runs recommend --session for every user who opens it: it
// must leave no history.db behind.
func OpenToRead(ctx context.Context, path string) (st *Store, absent *NoHistoryError, err error) {
	spooled := SpoolFor(path).Read()
	if !exists(path) || isEmptyFile(path) {
		empty, err := openEmpty(ctx, path)
		if err != nil {
			return nil, nil, err
		}
		empty.spooled = spooled
		if why := cannotCreate(path); why != nil && !exists(path) {
			return empty, &NoHistoryError{Path: path, Err: why}, nil
		}
		return empty, nil, nil
	}
	st, err = openReadOnly(ctx, path)
	var old *OldSchemaError
	if errors.As(err, &old) && old.Version == 0 {
		// Being made (its first migration not committed yet, by a collect
		// under way): it holds nothing yet.
		if st, err = openEmpty(ctx, path); err != nil {
			return nil, nil, err
		}
	} else if err != nil {
		return nil, nil, err
	}
	st.spooled = spooled
	return st, nil, nil
}

// isEmptyFile reports whether path is a file of no bytes: a history that
// Open created and a process killed before its schema was written. Open
// makes it one; to a read it holds nothing.
func isEmptyFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Size() == 0
}

// OldSchemaError is a history of a schema older than this build reads
// (oldestReadable): one sentence that names it and says what to run, which
// migrates it. A read never does.
type OldSchemaError struct {
	Path    string
	Version int
}

func (e *OldSchemaError) Error() string {
	return fmt.Sprintf("the history %s is of schema %d, older than this migadvisor reads (%d and later): run 'migadvisor collect --db %s' once, as a user who may write it, to bring it up to date",
		e.Path, e.Version, oldestReadable, slurm.ShellWord(e.Path))
}

// exists reports whether there is a file at path (of any kind: what is
// there is Open's to judge).
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil || !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR)
}

// cannotCreate says why no history could be created at path, found
// without creating anything: the nearest directory above it that exists
// is not one, or this user may not create in it. nil where one could be.
func cannotCreate(path string) error {
	dir := filepath.Dir(path)
	for {
		info, err := os.Stat(dir)
		switch {
		case err == nil && !info.IsDir():
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		case err == nil:
			if err := syscall.Access(dir, 0x2|0x1); err != nil { // W_OK|X_OK
				return &fs.PathError{Op: "create in", Path: dir, Err: err}
			}
			return nil
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
}

// openEmpty is a history of this build's schema that holds nothing and is
// stored nowhere, named path (for the messages that name the history read).
func openEmpty(ctx context.Context, path string) (*Store, error) {
	db, err := sql.Open("sqlite3", "file::memory:?_foreign_keys=on")
	if err != nil {
		return nil, err
	}
	// Each connection to :memory: is a database of its own: one for all.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path, schema: SchemaVersion, inMemory: true}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}
