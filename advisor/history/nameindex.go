package history

import (
	"context"
	"errors"
	"fmt"
)

// createNameIndex makes jobs_by_name as migration 17 does: the jobs of a
// job name, found without reading every job (UnlinkedNamed).
const createNameIndex = `CREATE INDEX IF NOT EXISTS jobs_by_name ON jobs(name)`

// withNameIndexDeferred runs write, which adds jobs, and where the history
// had none (a site's first collect: a million jobs; a site store copied
// into a new history), builds jobs_by_name once, sorted, after it: kept up
// row by row, each batch of an import would rewrite a page of the index
// for most of its jobs, which made such an import three times as long.
// The index is built even when write failed or was cancelled: the rows it
// committed stay, and need it. Into a history with jobs, it makes sure the
// index is there (an import stopped before building it), and the rows
// keep it up.
func (s *Store) withNameIndexDeferred(ctx context.Context, write func() error) error {
	var empty bool
	if err := s.db.QueryRowContext(ctx, `SELECT NOT EXISTS (SELECT 1 FROM jobs)`).Scan(&empty); err != nil {
		return fmt.Errorf("index the jobs' names: %w", err)
	}
	stmt := createNameIndex
	if empty {
		stmt = `DROP INDEX IF EXISTS jobs_by_name`
	}
	if _, err := s.db.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("index the jobs' names: %w", err)
	}
	err := write()
	if empty {
		if _, ierr := s.db.ExecContext(context.WithoutCancel(ctx), createNameIndex); ierr != nil {
			err = errors.Join(err, fmt.Errorf("index the jobs' names: %w", ierr))
		}
	}
	return err
}
