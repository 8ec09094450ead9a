//go:build !cgo

package history

import (
	"context"
	"errors"
)

// Built without cgo (the sbatch wrapper's binary, which reads only advice
// indexes), the package has no SQLite: opening a history fails with the
// driver's own error, and no error is SQLite's.

func isSQLite(error, ...sqliteCode) bool { return false }

func sqliteError(error, ...sqliteCode) (error, bool) { return nil, false }

// migrate needs SQLite: a history is never opened to write without cgo.
func (s *Store) migrate(context.Context) error {
	return errors.New("this migadvisor was built without SQLite (cgo)")
}
