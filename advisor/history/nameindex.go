package history

import (
	"context"
	"fmt"
)

// createNameIndex makes jobs_by_name as migration 17 does: the jobs of a
// job name, found without reading every job (UnlinkedNamed).
const createNameIndex = `CREATE INDEX IF NOT EXISTS jobs_by_name ON jobs(name)`

// deferNameIndex drops jobs_by_name from a history that has no jobs yet, so
// that an import into it (a site's first collect: a million jobs) builds
// the index once, sorted, at the end (buildNameIndex): kept up row by row,
// each batch would rewrite a page of it for most of its jobs, which made
// such an import three times as long. Into a history with jobs it makes
// sure the index is there (an import stopped before it was built) and the
// rows keep it up. It reports whether the index is to be built.
func (s *Store) deferNameIndex(ctx context.Context) (bool, error) {
	var empty bool
	if err := s.db.QueryRowContext(ctx, `SELECT NOT EXISTS (SELECT 1 FROM jobs)`).Scan(&empty); err != nil {
		return false, fmt.Errorf("import: %w", err)
	}
	stmt := createNameIndex
	if empty {
		stmt = `DROP INDEX IF EXISTS jobs_by_name`
	}
	if _, err := s.db.ExecContext(ctx, stmt); err != nil {
		return false, fmt.Errorf("import: %w", err)
	}
	return empty, nil
}

// buildNameIndex builds the index deferNameIndex dropped, even when the
// import was cancelled: the batches it committed stay, and need it.
func (s *Store) buildNameIndex(ctx context.Context) error {
	if _, err := s.db.ExecContext(context.WithoutCancel(ctx), createNameIndex); err != nil {
		return fmt.Errorf("index the jobs' names: %w", err)
	}
	return nil
}
