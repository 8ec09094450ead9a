package mariadb

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// Rows per INSERT, and keys per DELETE, of a push.
const rowsPerStatement = 500

// changesPerPush is how many of the outbox's changes one transaction of the
// store commits: a push cut short loses at most that much of its work,
// never what was committed.
const changesPerPush = 20_000

// testHookInBatch, when set, runs after a batch's first statement: where
// a test cuts the connection.
var testHookInBatch func()

// testHookBeforeApply, when set, runs between reading a batch from the
// outbox and writing it: where a test has another push overtake this one.
var testHookBeforeApply func()

// Push sends the changes waiting in the history's outbox to the store, a
// transaction per batch, and drops each batch from the outbox once the
// store has committed it; it reads the next batch from the history while
// the store writes this one. progress (may be nil) hears the changes sent
// so far and the total. It returns how many changes it sent. Pushes from
// one history take turns (history.Store.LockOutbox).
func (s *Store) Push(ctx context.Context, h *history.Store, progress func(sent, total int)) (int, error) {
	unlock, err := h.LockOutbox(ctx)
	if err != nil {
		return 0, err
	}
	defer unlock()
	total := 0
	if progress != nil { // counted only for it: PushWhile pushes every 50 ms
		var err error
		if total, err = h.OutboxLen(ctx); err != nil {
			return 0, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type read struct {
		b   *history.OutboxBatch
		err error
	}
	batches := make(chan read, 1) // one read ahead
	go func() {
		defer close(batches)
		var after int64
		for {
			b, err := h.OutboxBatch(ctx, after, changesPerPush)
			select {
			case batches <- read{b, err}:
			case <-ctx.Done():
				return
			}
			if err != nil || b.Changes == 0 {
				return
			}
			after = b.Through
		}
	}()
	drop := dropSent(ctx, h)
	sent := 0
	for r := range batches {
		if r.err != nil {
			return sent, errors.Join(r.err, drop.wait())
		}
		if r.b.Changes == 0 {
			return sent, drop.wait()
		}
		if testHookBeforeApply != nil {
			testHookBeforeApply()
		}
		if err := s.apply(ctx, r.b); err != nil {
			return sent, errors.Join(err, drop.wait())
		}
		if err := drop.upTo(r.b.Through); err != nil {
			return sent, err
		}
		sent += r.b.Changes
		if progress != nil {
			progress(sent, max(total, sent))
		}
	}
	return sent, errors.Join(ctx.Err(), drop.wait())
}

// outboxDropper drops what the store has committed from the outbox in its
// own goroutine, while the store writes the next batch: the deletes wait
// on the import's write lock, and the store need not wait on them. A push
// cut short before a drop sends those changes again, which the store's
// REPLACE makes harmless.
type outboxDropper struct {
	through chan int64
	done    chan struct{}
	err     error
}

func dropSent(ctx context.Context, h *history.Store) *outboxDropper {
	d := &outboxDropper{through: make(chan int64, 1), done: make(chan struct{})}
	go func() {
		defer close(d.done)
		for t := range d.through {
			if d.err = h.OutboxSent(ctx, t); d.err != nil {
				return // upTo and wait see done closed
			}
		}
	}()
	return d
}

// upTo asks for the changes through t to be dropped, a newer t replacing
// one not yet begun; it reports a drop that failed before.
func (d *outboxDropper) upTo(t int64) error {
	select {
	case <-d.done:
		return d.err
	default:
	}
	for {
		select {
		case d.through <- t:
			return nil
		case <-d.through: // one not begun: t covers it
		}
	}
}

// wait lets the last drop finish and reports its error.
func (d *outboxDropper) wait() error {
	close(d.through)
	<-d.done
	return d.err
}

// PushWhile runs write (a collect's import into h) and meanwhile sends to
// the store what write has committed, then the rest once write is done
// (or has failed): the import and the store's writes overlap. A failed
// push stops the sending, not write, and what was not sent waits in the
// outbox; write's error comes first.
func (s *Store) PushWhile(ctx context.Context, h *history.Store, write func() error, progress func(sent, total int)) (int, error) {
	stop, done := make(chan struct{}), make(chan struct{})
	var sent int
	var pushErr error
	go func() {
		defer close(done)
		for {
			n, err := s.Push(ctx, h, nil)
			if sent += n; err != nil {
				pushErr = err
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(pushWhilePause):
			}
		}
	}()
	werr := write()
	close(stop)
	<-done
	if pushErr != nil {
		return sent, cmp.Or(werr, pushErr)
	}
	// What write committed goes to the store, even when it failed after.
	n, err := s.Push(ctx, h, progress)
	return sent + n, cmp.Or(werr, err)
}

// pushWhilePause is how long PushWhile waits, the outbox empty, for write
// to commit more.
const pushWhilePause = 50 * time.Millisecond

// apply writes one batch in one transaction: the rows written, each in
// place of the row of its key (write), then the rows deleted.
func (s *Store) apply(ctx context.Context, b *history.OutboxBatch) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("write", err)
	}
	defer tx.Rollback()
	for _, t := range b.Tables {
		for start := 0; start < len(t.Rows); start += rowsPerLoad {
			if err := s.write(ctx, tx, t, t.Rows[start:min(start+rowsPerLoad, len(t.Rows))]); err != nil {
				return s.fail("write "+t.Name, err)
			}
			if start == 0 && testHookInBatch != nil {
				testHookInBatch()
			}
		}
		for start := 0; start < len(t.Deleted); start += rowsPerStatement {
			if err := remove(ctx, tx, t, t.Deleted[start:min(start+rowsPerStatement, len(t.Deleted))]); err != nil {
				return s.fail("delete from "+t.Name, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return s.fail("commit", err)
	}
	return nil
}

// write writes rows by LOAD DATA LOCAL, or where the server refuses it
// (MySQL 8 turns local_infile off by default) by multi-row INSERTs, from
// then on.
func (s *Store) write(ctx context.Context, tx *sql.Tx, t history.TableChanges, rows [][]any) error {
	if !s.noLoadData.Load() {
		err := load(ctx, tx, t, rows)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || (me.Number != erNotAllowedCommand && me.Number != erLocalFilesDisabled) {
			return err
		}
		s.noLoadData.Store(true) // the statement failed alone: the transaction goes on
	}
	for start := 0; start < len(rows); start += rowsPerStatement {
		if err := upsert(ctx, tx, t, rows[start:min(start+rowsPerStatement, len(rows))]); err != nil {
			return err
		}
	}
	return nil
}

// The server's refusals of LOAD DATA LOCAL: "The used command is not
// allowed with this MariaDB/MySQL version", and MySQL 8's "Loading local
// data is disabled".
const (
	erNotAllowedCommand  = 1148
	erLocalFilesDisabled = 3948
)

func upsert(ctx context.Context, tx *sql.Tx, t history.TableChanges, rows [][]any) error {
	cols := quoteAll(t.Columns)
	update := make([]string, len(cols))
	for i, c := range cols {
		update[i] = fmt.Sprintf("%s = VALUES(%s)", c, c)
	}
	var q strings.Builder
	fmt.Fprintf(&q, "INSERT INTO %s (%s) VALUES ", quote(t.Name), strings.Join(cols, ", "))
	args := tuples(&q, len(cols), rows)
	fmt.Fprintf(&q, " ON DUPLICATE KEY UPDATE %s", strings.Join(update, ", "))
	_, err := tx.ExecContext(ctx, q.String(), args...)
	return err
}

// tuples writes "(?, ?), (?, ?)" to q for rows of n values, and returns
// the rows' values as the statement's arguments.
func tuples(q *strings.Builder, n int, rows [][]any) []any {
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
	args := make([]any, 0, len(rows)*n)
	for i, r := range rows {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(tuple)
		args = append(args, r...)
	}
	return args
}

// quoteAll quotes each name.
func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = quote(n)
	}
	return out
}

// rowsPerLoad are the rows of one LOAD DATA: a few MB of text.
const rowsPerLoad = 5000

// loads names each LOAD DATA's reader for the driver, which finds it by name.
var loads atomic.Int64

// load writes rows by LOAD DATA ... REPLACE, the server's bulk path (three
// times the rows a second of multi-row INSERTs on the 2-core machine): each
// row whole, in place of the row of the same key. The rows go as
// tab-separated text in the format LOAD DATA reads by default.
func load(ctx context.Context, tx *sql.Tx, t history.TableChanges, rows [][]any) error {
	var buf bytes.Buffer
	for _, r := range rows {
		for i, v := range r {
			if i > 0 {
				buf.WriteByte('\t')
			}
			writeField(&buf, v)
		}
		buf.WriteByte('\n')
	}
	name := fmt.Sprintf("migadvisor-%d", loads.Add(1))
	mysql.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(buf.Bytes()) })
	defer mysql.DeregisterReaderHandler(name)
	cols := quoteAll(t.Columns)
	_, err := tx.ExecContext(ctx, fmt.Sprintf("LOAD DATA LOCAL INFILE 'Reader::%s' REPLACE INTO TABLE %s CHARACTER SET utf8mb4 (%s)",
		name, quote(t.Name), strings.Join(cols, ", ")))
	return err
}

// fieldEscapes are what LOAD DATA's default format escapes in a field.
var fieldEscapes = strings.NewReplacer("\\", "\\\\", "\t", "\\t", "\n", "\\n", "\r", "\\r", "\x00", "\\0")

// writeField writes one value as LOAD DATA reads it: NULL as \N.
func writeField(buf *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		buf.WriteString("\\N")
	case int64:
		buf.WriteString(strconv.FormatInt(x, 10))
	case float64:
		buf.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case bool:
		if x {
			buf.WriteByte('1')
		} else {
			buf.WriteByte('0')
		}
	case []byte:
		fieldEscapes.WriteString(buf, string(x))
	case string:
		fieldEscapes.WriteString(buf, x)
	default:
		fieldEscapes.WriteString(buf, fmt.Sprint(x))
	}
}

func remove(ctx context.Context, tx *sql.Tx, t history.TableChanges, keys [][]any) error {
	cols := quoteAll(t.Key)
	var q strings.Builder
	fmt.Fprintf(&q, "DELETE FROM %s WHERE (%s) IN (", quote(t.Name), strings.Join(cols, ", "))
	args := tuples(&q, len(cols), keys)
	q.WriteString(")")
	_, err := tx.ExecContext(ctx, q.String(), args...)
	return err
}

// quote is an identifier as MySQL reads it: `partition`, `key` and `end`
// are reserved words there.
func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// CopyInto writes the whole store into h, a history with none of its rows
// (a new one, to publish the store from): every table, in the order
// history.OutboxTables gives. It returns how many jobs it copied.
func (s *Store) CopyInto(ctx context.Context, h *history.Store) (int, error) {
	jobs := 0
	for _, t := range history.OutboxTables {
		n, err := s.copyTable(ctx, h, t.Name)
		if err != nil {
			return jobs, err
		}
		if t.Name == "jobs" {
			jobs = n
		}
	}
	return jobs, nil
}

func (s *Store) copyTable(ctx context.Context, h *history.Store, table string) (int, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT * FROM "+quote(table))
	if err != nil {
		return 0, s.fail("read "+table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, s.fail("read "+table, err)
	}
	next := func() ([]any, bool, error) {
		if !rows.Next() {
			return nil, false, rows.Err()
		}
		vals, err := history.ScanRow(rows, len(cols))
		if err != nil {
			return nil, false, err
		}
		for i, v := range vals {
			// The driver gives text (and, by its text protocol, numbers)
			// as bytes; SQLite would keep bytes as a BLOB, which no text
			// equals. As a string, a column's type applies to it.
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		return vals, true, nil
	}
	n, err := h.LoadTable(ctx, table, cols, next)
	if err != nil {
		return n, s.fail("copy "+table, err)
	}
	return n, nil
}
