// Package mariadb keeps a site's history in MariaDB or MySQL, for sites
// that prefer a database server to the SQLite file of advisor/base/history:
// several collectors, dashboards on the history, a server already run
// beside slurmdbd. Its tables and columns are the history's; its schema is
// versioned by embedded migrations (pressly/goose), and a schema newer
// than this build's is refused, never misread. The credentials come from a
// MySQL option file readable by the admin alone (ReadOptionFile).
package mariadb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/pressly/goose/v3"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is an open site store.
type Store struct {
	db       *sql.DB
	where    string // "user@host:port/database", for messages
	id       string // "host:port/database"
	database string
	// noLoadData: the server refused LOAD DATA LOCAL; rows go by INSERT.
	noLoadData atomic.Bool
}

// Open connects to the site store the option file names and migrates its
// schema to this build's. Two collectors that open a store at once wait for
// each other's migration (a named lock on the server).
func Open(ctx context.Context, opt Options) (*Store, error) {
	s := &Store{where: opt.where(), id: opt.id(), database: opt.Database}
	db, err := Connect(opt)
	if err != nil {
		return nil, s.fail("open", err)
	}
	s.db = db
	// A server that takes the connection and never answers is given the
	// connect timeout, not the read timeout of a statement.
	pingCtx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, s.fail("connect", err)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Connect is a connection pool with the options' credentials, the
// schema left as it is: for tools and tests that make or drop databases.
func Connect(opt Options) (*sql.DB, error) {
	c, err := mysql.NewConnector(opt.config()) // a DSN would lose the config's logger
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// Close closes the connections.
func (s *Store) Close() error { return s.db.Close() }

// DB is the connection pool, for the store's own packages and tests.
func (s *Store) DB() *sql.DB { return s.db }

// Where names the store: user@host:port/database.
func (s *Store) Where() string { return s.where }

// ID is the store whoever connects: host:port/database (where, less the user).
func (s *Store) ID() string { return s.id }

// ErrNewerSchema means a newer migadvisor migrated the store.
var ErrNewerSchema = errors.New("the site store was written by a newer migadvisor")

// migrateLock is the server's named lock held while a store's schema is
// migrated (server-wide: one per database).
func migrateLock(database string) string { return "migadvisor.migrate." + database }

func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return s.fail("connect", err)
	}
	defer conn.Close()
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 60)", migrateLock(s.database)).Scan(&got); err != nil {
		return s.fail("lock the schema for its migration", err)
	} else if got.Int64 != 1 {
		return s.fail("lock the schema for its migration", errors.New("another collector held the lock for 60 s, or the server refused it"))
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK(?)", migrateLock(s.database))
	p, err := s.provider()
	if err != nil {
		return err
	}
	current, target, err := p.GetVersions(ctx)
	if err != nil {
		return s.fail("read the schema version", err)
	}
	if current > target {
		return fmt.Errorf("%s: %w (schema %d; this one knows up to %d)", s.where, ErrNewerSchema, current, target)
	}
	if _, err := p.Up(ctx); err != nil {
		return s.fail("migrate the schema", err)
	}
	return nil
}

func (s *Store) provider() (*goose.Provider, error) {
	p, err := goose.NewProvider(goose.DialectMySQL, s.db, migrationFiles(),
		goose.WithDisableGlobalRegistry(true), goose.WithTableName("migadvisor_schema"))
	if err != nil {
		return nil, fmt.Errorf("site store %s: the built-in migrations: %w", s.where, err)
	}
	return p, nil
}

// Version is the store's schema version.
func (s *Store) Version(ctx context.Context) (int64, error) {
	p, err := s.provider()
	if err != nil {
		return 0, err
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return 0, s.fail("read the schema version", err)
	}
	return v, nil
}

// fail is one sentence: the store, what failed, and why in the server's words.
func (s *Store) fail(what string, err error) error {
	var me *mysql.MySQLError
	var ne net.Error
	switch {
	case errors.As(err, &me) && me.Number == 1045:
		return fmt.Errorf("site store %s: could not %s: the server refused the user and password (%s): check the option file", s.where, what, me.Message)
	case errors.As(err, &me) && me.Number == 1049:
		return fmt.Errorf("site store %s: could not %s: the database does not exist: create it (CREATE DATABASE) and grant the user its privileges", s.where, what)
	case errors.As(err, &me) && me.Number == 1044:
		return fmt.Errorf("site store %s: could not %s: the user may not use that database (%s): GRANT ALL PRIVILEGES ON it TO the user, or name another in the option file", s.where, what, me.Message)
	case errors.As(err, &ne), errors.Is(err, context.DeadlineExceeded), errors.Is(err, mysql.ErrInvalidConn), errors.Is(err, driver.ErrBadConn):
		return fmt.Errorf("site store %s: could not %s: the server did not answer (within %v, or it dropped the connection): %w", s.where, what, connectTimeout, err)
	}
	return fmt.Errorf("site store %s: could not %s: %w", s.where, what, err)
}

// connectTimeout bounds reaching the server and its first answer; a
// statement's answer may take a minute (a batch of 20,000 rows is written
// in under a second on the 2-core machine).
var connectTimeout = 10 * time.Second // a variable: its test waits less

// config is the driver's configuration: the option file's, with
// timeouts that keep an unreachable server from holding a collect for
// long, and the client's time zone left out (times are unix seconds).
func (o Options) config() *mysql.Config {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.DBName = o.User, o.Password, o.Database
	if o.local() {
		c.Net, c.Addr = "unix", o.socket()
	} else {
		c.Net, c.Addr = "tcp", net.JoinHostPort(o.Host, strconv.Itoa(o.port()))
	}
	c.Timeout, c.ReadTimeout, c.WriteTimeout = connectTimeout, time.Minute, time.Minute
	c.MultiStatements = false
	// The driver would log a lost connection on stderr as well: the error
	// it returns says it, in one sentence.
	c.Logger = log.New(io.Discard, "", 0)
	c.InterpolateParams = true // one round trip a statement, not three (prepare, execute, close)
	c.Params = map[string]string{"sql_mode": "'STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ENGINE_SUBSTITUTION'"}
	return c
}

// local is the server on this host, reached through its socket: as
// MySQL's own clients take host "localhost" (or none).
func (o Options) local() bool { return o.Host == "" || o.Host == "localhost" }

func (o Options) socket() string {
	if o.Socket != "" {
		return o.Socket
	}
	return "/run/mysqld/mysqld.sock"
}

func (o Options) port() int {
	if o.Port > 0 {
		return o.Port
	}
	return 3306
}

func (o Options) where() string { return o.User + "@" + o.id() }

func (o Options) id() string {
	at := o.Host + ":" + strconv.Itoa(o.port())
	if o.local() {
		at = "localhost (" + o.socket() + ")"
	}
	return at + "/" + o.Database
}
