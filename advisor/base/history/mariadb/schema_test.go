package mariadb

import (
	"context"
	"database/sql"
	"io/fs"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"
	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// The store's migrations, as read here, make the SQLite history's tables
// and columns in its order: a column added to the history and not to the
// store fails here, without a server (TestMariaDBSchemaIsTheHistorys
// checks the same on MariaDB itself).
func TestMigrationsMakeTheHistorysColumns(t *testing.T) {
	got, _ := migratedTables(t)
	want := sqliteColumns(t)
	for _, table := range slices.Sorted(maps.Keys(want)) {
		if !slices.Equal(got[table], want[table]) {
			t.Errorf("%s: the store's migrations make %v, the history has %v", table, got[table], want[table])
		}
	}
	for table := range got {
		if _, ok := want[table]; !ok {
			t.Errorf("the store's migrations make table %s, the history has none", table)
		}
	}
}

var (
	sqlComment  = regexp.MustCompile(`(?m)--.*$`)
	primaryKey  = regexp.MustCompile(`(?is)^PRIMARY KEY\s*\(([^)]*)\)`)
	createTable = regexp.MustCompile(`(?is)^CREATE TABLE (?:IF NOT EXISTS )?` + "`?" + `(\w+)` + "`?" + `\s*\((.*)\)[^)]*$`)
	alterTable  = regexp.MustCompile(`(?is)^ALTER TABLE ` + "`?" + `(\w+)` + "`?" + `\s+(.*)$`)
	dropTable   = regexp.MustCompile(`(?is)^DROP TABLE (?:IF EXISTS )?` + "`?" + `(\w+)`)
)

// Push writes each table of history.OutboxTables to the store by REPLACE
// and deletes its rows by the outbox's key, and CopyInto reads it back:
// the store's migrations make each, keyed on that key, so that a row
// replaces or deletes the row the outbox names and no other
// (TestEveryTableReachesTheSiteStore checks the history's side).
func TestMigrationsKeyTheOutboxTables(t *testing.T) {
	columns, keys := migratedTables(t)
	for _, tbl := range history.OutboxTables {
		if _, ok := columns[tbl.Name]; !ok {
			t.Errorf("%s: the history pushes it, the store's migrations make no such table", tbl.Name)
			continue
		}
		if !slices.Equal(keys[tbl.Name], tbl.Key) {
			t.Errorf("%s: the store's primary key is %v, the outbox's key %v", tbl.Name, keys[tbl.Name], tbl.Key)
		}
	}
}

// migratedTables are the tables and columns the embedded migrations' Up
// sections make, in order: CREATE TABLE's columns (not its keys and
// indexes), ALTER TABLE's ADD COLUMN and DROP COLUMN, DROP TABLE; and each
// table's primary key, as CREATE TABLE declares it.
func migratedTables(t *testing.T) (columns, keys map[string][]string) {
	t.Helper()
	files, err := fs.Glob(migrationFiles(), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	out, keys := map[string][]string{}, map[string][]string{}
	for _, name := range files { // in order: their names start with their numbers
		data, err := fs.ReadFile(migrationFiles(), name)
		if err != nil {
			t.Fatal(err)
		}
		up, _, _ := strings.Cut(string(data), "-- +goose Down")
		_, up, _ = strings.Cut(up, "-- +goose Up")
		for _, stmt := range strings.Split(sqlComment.ReplaceAllString(up, ""), ";") {
			stmt = strings.TrimSpace(stmt)
			switch {
			case stmt == "":
			case createTable.MatchString(stmt):
				m := createTable.FindStringSubmatch(stmt)
				for _, item := range topLevel(m[2]) {
					switch first := strings.ToUpper(firstWord(item)); first {
					case "PRIMARY":
						keys[m[1]] = nil
						for _, c := range strings.Split(primaryKey.FindStringSubmatch(item)[1], ",") {
							keys[m[1]] = append(keys[m[1]], strings.Trim(strings.TrimSpace(c), "`"))
						}
					case "INDEX", "KEY", "UNIQUE", "CONSTRAINT", "FOREIGN":
					default:
						column := strings.Trim(firstWord(item), "`")
						out[m[1]] = append(out[m[1]], column)
						if strings.Contains(strings.ToUpper(item), "PRIMARY KEY") {
							keys[m[1]] = []string{column}
						}
					}
				}
			case alterTable.MatchString(stmt):
				m := alterTable.FindStringSubmatch(stmt)
				for _, clause := range topLevel(m[2]) {
					words := strings.Fields(clause)
					if len(words) < 3 || !strings.EqualFold(words[1], "COLUMN") {
						continue // an index
					}
					column := strings.Trim(words[2], "`")
					switch strings.ToUpper(words[0]) {
					case "ADD":
						out[m[1]] = append(out[m[1]], column)
					case "DROP":
						out[m[1]] = slices.DeleteFunc(out[m[1]], func(c string) bool { return c == column })
					}
				}
			case dropTable.MatchString(stmt):
				delete(out, dropTable.FindStringSubmatch(stmt)[1])
				delete(keys, dropTable.FindStringSubmatch(stmt)[1])
			default:
				t.Fatalf("%s: a statement this test does not read: %s", name, stmt)
			}
		}
	}
	return out, keys
}

// topLevel splits a list at its commas outside parentheses.
func topLevel(list string) []string {
	var out []string
	depth, from := 0, 0
	for i, c := range list {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(list[from:i]))
				from = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(list[from:]))
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// sqliteColumns are a new SQLite history's tables and their columns, in
// order, less its outbox (what it has yet to push to a site store).
func sqliteColumns(t *testing.T) map[string][]string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.db")
	st, err := history.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE 'outbox%' AND m.name <> 'migadvisor_schema' ORDER BY m.name, p.cid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var table, column string
		rows.Scan(&table, &column)
		out[table] = append(out[table], column)
	}
	return out
}
