//go:build !cgo

package history

import (
	"database/sql/driver"
	"errors"
)

// Without cgo no history is opened to write (migrate refuses): these are
// never reached.

func writeRows(*importStmts, rowBuf, int, int64) ([]rowOutcome, int, error) {
	return nil, 0, errors.New("this migadvisor was built without SQLite (cgo)")
}

func withoutTriggers(driver.Stmt) (func(), error) {
	return nil, errors.New("this migadvisor was built without SQLite (cgo)")
}
