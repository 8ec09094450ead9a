package history

import (
	"context"
	"errors"
	"fmt"
)

// createNameIndex makes jobs_by_name as migration 17 does: the jobs of a
// job name, found without reading every job (UnlinkedNamed).
const createNameIndex = `CREATE INDEX IF NOT EXISTS jobs_by_name ON jobs(name)`

// createSubmitIndex makes jobs_by_submit as migration 19 does: the newest
// jobs read without sorting them all (newestFirst).
const createSubmitIndex = `CREATE INDEX IF NOT EXISTS jobs_by_submit ON jobs(submit)`

// deferredIndexes are the jobs' indexes an import into an empty history
// builds once after it, each with its DROP.
var deferredIndexes = [][2]string{
	{createNameIndex, `DROP INDEX IF EXISTS jobs_by_name`},
	{createSubmitIndex, `DROP INDEX IF EXISTS jobs_by_submit`},
}

// withJobIndexesDeferred runs write, which adds jobs, and where the history
// had none (a site's first collect: a million jobs; a site store copied
// into a new history), builds jobs_by_name and jobs_by_submit once,
// sorted, after it: kept up row by row, each batch of an import would
// rewrite a page of each index for most of its jobs, which made such an
// import three times as long. The indexes are built even when write failed
// or was cancelled: the rows it committed stay, and need them. Into a
// history with jobs, it makes sure the indexes are there (an import
// stopped before building them), and the rows keep them up.
func (s *Store) withJobIndexesDeferred(ctx context.Context, write func() error) error {
	var empty bool
	if err := s.db.QueryRowContext(ctx, `SELECT NOT EXISTS (SELECT 1 FROM jobs)`).Scan(&empty); err != nil {
		return fmt.Errorf("index the jobs: %w", err)
	}
	for _, ix := range deferredIndexes {
		stmt := ix[0]
		if empty {
			stmt = ix[1]
		}
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("index the jobs: %w", err)
		}
	}
	err := write()
	if empty {
		for _, ix := range deferredIndexes {
			if _, ierr := s.db.ExecContext(context.WithoutCancel(ctx), ix[0]); ierr != nil {
				err = errors.Join(err, fmt.Errorf("index the jobs: %w", ierr))
			}
		}
	}
	return err
}
