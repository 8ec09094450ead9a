//go:build !cgo

package history

// Built without cgo (the sbatch wrapper's binary, which reads only advice
// indexes), the package has no SQLite: opening a history fails with the
// driver's own error, and no error is SQLite's.

func isSQLite(error, ...sqliteCode) bool { return false }

func sqliteError(error, ...sqliteCode) (error, bool) { return nil, false }
