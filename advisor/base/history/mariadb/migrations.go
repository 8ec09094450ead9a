package mariadb

import (
	"io/fs"
	"strconv"
	"strings"
)

// migrationFiles are the embedded migrations, as goose reads them (the
// directory's files at its root).
func migrationFiles() fs.FS {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the directory is embedded
	}
	return sub
}

// SchemaVersion is the schema this build migrates a store to: its newest
// migration's number.
func SchemaVersion() int64 {
	entries, _ := fs.ReadDir(migrationFiles(), ".")
	var v int64
	for _, e := range entries {
		prefix, _, _ := strings.Cut(e.Name(), "_")
		if n, err := strconv.ParseInt(prefix, 10, 64); err == nil && n > v {
			v = n
		}
	}
	return v
}
