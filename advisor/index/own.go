package index

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/migadvisor/migadvisor/advisor/history"
)

// OwnPath is the user's own index of the history at db: beside it, with
// .idx for its extension (history.db: history.idx).
func OwnPath(db string) string {
	return strings.TrimSuffix(db, filepath.Ext(db)) + ".idx"
}

// Refresh rebuilds the user's own index of the history at db when the
// history changed after it was written (the database or its WAL is newer),
// readable by the user alone: it holds their scripts' paths (hashed) and
// their jobs' outcome sentences. It reports whether it wrote one; a history
// that is not there has no index.
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
	return true, writeFile(own, entries, 0o600)
}

// stale reports whether the history at db (or its WAL) was modified after
// the index at idx, or there is no index; false when there is no history.
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
	return !newest.Before(idxInfo.ModTime())
}
