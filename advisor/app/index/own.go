package index

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// OwnPath is the user's own index of the history at db: beside it, with
// .idx for its extension (history.db: history.idx).
func OwnPath(db string) string {
	return strings.TrimSuffix(db, filepath.Ext(db)) + ".idx"
}

// FilterCachePath is the cache of the sbatch filter's answers made of the
// user's index of the history at db (advisor/app/wrapper): beside the history,
// removed whenever Refresh rewrites the index, so no answer outlives the
// runs it was made of (advisor/app/wrapper's RefreshIndex, which collect runs,
// then answers them again of the new index).
func FilterCachePath(db string) string { return db + ".clifilter" }

// Refresh rebuilds the user's own index of the history at db when the
// history changed after it was written (the database or its WAL is newer)
// or it is of an older version (which holds no sessions), readable by the
// user alone: it holds their scripts' paths (hashed), their jobs' outcome
// sentences and their sessions by job name. It reports whether it wrote one; a history
// that is not there has no index. The sbatch filter's cache of answers
// made of the index it replaces goes with it (FilterCachePath).
func Refresh(ctx context.Context, db string) (bool, error) {
	own := OwnPath(db)
	if !stale(db, own) {
		return false, nil
	}
	st, err := history.OpenWith(ctx, db, history.Options{ReadOnly: true})
	if err != nil {
		return false, err
	}
	defer st.Close()
	entries, _, err := Build(ctx, st, Options{Private: true})
	if err != nil {
		return false, err
	}
	if err := writeFile(own, entries, 0o600); err != nil {
		return true, err
	}
	if err := os.Remove(FilterCachePath(db)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return true, fmt.Errorf("the sbatch filter's answers of the index replaced: %w", err)
	}
	return true, nil
}

// stale reports whether the history at db (or its WAL) was modified after
// the index at idx, or there is no index, or one of an older version (or
// none this build reads), or one written after now (on a clock set back
// since: the history's later changes bear earlier times); false when there
// is no history.
func stale(db, idx string) bool {
	dbInfo, err := os.Stat(db)
	if err != nil {
		return false
	}
	idxInfo, err := os.Stat(idx)
	if err != nil {
		return true
	}
	newest := dbInfo.ModTime()
	if wal, err := os.Stat(db + "-wal"); err == nil && wal.ModTime().After(newest) {
		newest = wal.ModTime()
	}
	return !newest.Before(idxInfo.ModTime()) || idxInfo.ModTime().After(time.Now()) || !current(idx)
}

// current reports whether the index at idx is of this build's version.
func current(idx string) bool {
	r, err := Open(idx)
	if err != nil {
		return false
	}
	defer r.Close()
	return r.Version() == Version
}
