//go:build mariadb

package mariadb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

// The integration tests run against the dev cluster's MariaDB (make test
// starts it: scripts/dev-cluster.sh), as the user its option file names
// ($DEV_CLUSTER_STATE/migadvisor-site-store.cnf), each in a database of
// its own that it drops at the end.
const devOptionFile = "/var/tmp/slurm-local/migadvisor-site-store.cnf"

// testStore is the options of a new, empty database of the dev cluster's
// MariaDB, dropped when the test ends.
func testStore(t testing.TB) Options {
	t.Helper()
	file := devOptionFile
	if dir := os.Getenv("DEV_CLUSTER_STATE"); dir != "" { // as scripts/dev-cluster.sh reads it
		file = filepath.Join(dir, "migadvisor-site-store.cnf")
	}
	opt, err := ReadOptionFile(file)
	if err != nil {
		t.Fatalf("the dev cluster's site store (scripts/dev-cluster.sh up makes it): %v", err)
	}
	admin, err := Connect(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	b := make([]byte, 4)
	rand.Read(b)
	opt.Database = "migadvisor_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec("CREATE DATABASE " + opt.Database); err != nil {
		t.Fatalf("create %s: %v", opt.Database, err)
	}
	t.Cleanup(func() { admin.Exec("DROP DATABASE " + opt.Database) })
	return opt
}

// A new store is migrated to this build's schema, once however many
// collectors open it together; one a newer migadvisor migrated is refused.
func TestMariaDBMigratesAndRefusesANewerSchema(t *testing.T) {
	ctx := context.Background()
	opt := testStore(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ctx, opt)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("opened together: %v", err)
		}
	}
	s, err := Open(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Version(ctx); err != nil || v != SchemaVersion() || v < 1 {
		t.Fatalf("version %d (%v), want %d", v, err, SchemaVersion())
	}
	var applied int
	s.DB().QueryRow("SELECT count(*) FROM migadvisor_schema WHERE version_id > 0").Scan(&applied)
	if applied != int(SchemaVersion()) {
		t.Errorf("%d migrations recorded, want %d: applied twice?", applied, SchemaVersion())
	}
	if _, err := s.DB().Exec("INSERT INTO migadvisor_schema(version_id, is_applied) VALUES (?, 1)", SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, opt)
	if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), opt.Database) ||
		!strings.Contains(err.Error(), fmt.Sprintf("schema %d; this one knows up to %d", SchemaVersion()+1, SchemaVersion())) {
		t.Errorf("a newer schema: %v", err)
	}
}

// The store's tables and columns are the SQLite history's, so that a
// history moves between them whole: a migration added to one and not the
// other fails here.
func TestMariaDBSchemaIsTheHistorys(t *testing.T) {
	ctx := context.Background()
	opt := testStore(t)
	s, err := Open(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := sqliteColumns(t)
	got := map[string][]string{}
	rows, err := s.DB().QueryContext(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = ? AND table_name <> 'migadvisor_schema' ORDER BY table_name, ordinal_position`, opt.Database)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, column string
		rows.Scan(&table, &column)
		got[table] = append(got[table], column)
	}
	for _, table := range slices.Sorted(maps.Keys(want)) {
		if !slices.Equal(got[table], want[table]) {
			t.Errorf("%s: MariaDB has %v, the history %v", table, got[table], want[table])
		}
	}
	for table := range got {
		if _, ok := want[table]; !ok {
			t.Errorf("MariaDB has table %s, the history does not", table)
		}
	}
}

// A wrong password and a server that does not answer are each one sentence
// that names the store and what failed.
func TestMariaDBConnectionErrorsSaySo(t *testing.T) {
	ctx := context.Background()
	opt := testStore(t)
	wrong := opt
	wrong.Password = "not-the-password"
	_, err := Open(ctx, wrong)
	if err == nil || !strings.Contains(err.Error(), "site store "+opt.where()+": could not connect: the server refused the user and password") {
		t.Errorf("wrong password: %v", err)
	}
	away := opt
	away.Host, away.Port = "127.0.0.1", 1
	_, err = Open(ctx, away)
	if err == nil || !strings.Contains(err.Error(), "site store "+opt.User+"@127.0.0.1:1/"+opt.Database+": could not connect: the server did not answer") {
		t.Errorf("no server: %v", err)
	}
	if strings.Contains(fmt.Sprint(err), opt.Password) {
		t.Errorf("the password is in the message: %v", err)
	}
	// A server that takes the connection and never answers: the connect
	// timeout, not a statement's.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent
		}
	}()
	defer func(d time.Duration) { connectTimeout = d }(connectTimeout)
	connectTimeout = time.Second
	silent := opt
	silent.Host, silent.Port = "127.0.0.1", ln.Addr().(*net.TCPAddr).Port
	start := time.Now()
	_, err = Open(ctx, silent)
	if err == nil || !strings.Contains(err.Error(), "could not connect: the server did not answer") || time.Since(start) > 10*time.Second {
		t.Errorf("a silent server: %v after %v", err, time.Since(start))
	}
}
