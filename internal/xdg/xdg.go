// Package xdg names migadvisor's files in the XDG base directories.
package xdg

import (
	"os"
	"path/filepath"
)

// HistoryDB is the user's history: $XDG_DATA_HOME/migadvisor/history.db
// (~/.local/share when XDG_DATA_HOME is not set), or history.db in the
// working directory when there is no home.
func HistoryDB() string {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "history.db"
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "migadvisor", "history.db")
}
