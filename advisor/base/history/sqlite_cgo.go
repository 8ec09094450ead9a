//go:build cgo

package history

import (
	"database/sql"
	"errors"

	"github.com/mattn/go-sqlite3" // the "sqlite3" driver (cgo)
)

func init() {
	sql.Register(sharedDriver, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		return c.SetFileControlInt("main", fcntlPersistWAL, 1)
	}})
}

var sqliteCodes = map[sqliteCode]sqlite3.ErrNo{codeBusy: sqlite3.ErrBusy, codeLocked: sqlite3.ErrLocked,
	codeReadonly: sqlite3.ErrReadonly, codeCantOpen: sqlite3.ErrCantOpen, codeNotADB: sqlite3.ErrNotADB, codeCorrupt: sqlite3.ErrCorrupt,
	codeFull: sqlite3.ErrFull}

// isSQLite reports whether err is SQLite's error of one of codes.
func isSQLite(err error, codes ...sqliteCode) bool {
	_, ok := sqliteError(err, codes...)
	return ok
}

// sqliteError is SQLite's own error in err, when it is of one of codes.
func sqliteError(err error, codes ...sqliteCode) (error, bool) {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return nil, false
	}
	for _, c := range codes {
		if se.Code == sqliteCodes[c] {
			return se, true
		}
	}
	return nil, false
}
