//go:build cgo

package history

/*
#include <stdint.h>
#include <string.h>

// SQLite's API as go-sqlite3 links it (its amalgamation, or the system's
// libsqlite3 under its libsqlite3 tag): the few functions used here.
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
int sqlite3_bind_null(sqlite3_stmt*, int);
int sqlite3_bind_int64(sqlite3_stmt*, int, long long);
int sqlite3_bind_double(sqlite3_stmt*, int, double);
int sqlite3_bind_text(sqlite3_stmt*, int, const char*, int, void (*)(void*));
int sqlite3_bind_parameter_count(sqlite3_stmt*);
int sqlite3_step(sqlite3_stmt*);
int sqlite3_reset(sqlite3_stmt*);
int sqlite3_clear_bindings(sqlite3_stmt*);
sqlite3 *sqlite3_db_handle(sqlite3_stmt*);
int sqlite3_changes(sqlite3*);
int sqlite3_extended_errcode(sqlite3*);
const char *sqlite3_errmsg(sqlite3*);
int sqlite3_db_config(sqlite3*, int, ...);
typedef struct sqlite3_mutex sqlite3_mutex;
sqlite3_mutex *sqlite3_db_mutex(sqlite3*);
void sqlite3_mutex_enter(sqlite3_mutex*);
void sqlite3_mutex_leave(sqlite3_mutex*);

enum { OK = 0, TOOBIG = 18, MISUSE = 21, ROW = 100, DONE = 101, DBCONFIG_ENABLE_TRIGGER = 1003 };

// As rows.go numbers them.
enum { KIND_JOB, KIND_USAGE };
enum { VAL_NULL, VAL_INT, VAL_FLOAT, VAL_TEXT };
enum { OUT_NEW, OUT_UPDATED, OUT_UNCHANGED, OUT_USAGE };

// A job row's values: cluster, job_key, then jobColumns' 32; a usage
// row's: cluster, job_key and the three figures. ?3 is the time stamp.
enum { JOB_VALUES = 34, USAGE_VALUES = 5 };

// bind_row binds a row's n values from *pp, the first two to ?1 and ?2,
// the rest from ?4, and now to ?3; texts are bound where they lie
// (SQLITE_STATIC), so the statement's bindings are cleared before the
// buffer goes. A value past the statement's last parameter is read and
// left unbound: an update of the columns a dump carries may end before
// the row does.
static int bind_row(sqlite3_stmt *s, const unsigned char **pp, int n, long long now) {
	const unsigned char *p = *pp;
	int last = sqlite3_bind_parameter_count(s);
	int rc = sqlite3_bind_int64(s, 3, now);
	for (int i = 0; i < n && rc == OK; i++) {
		int col = i < 2 ? i + 1 : i + 2;
		int bound = col <= last;
		switch (*p++) {
		case VAL_NULL:
			rc = bound ? sqlite3_bind_null(s, col) : OK;
			break;
		case VAL_INT: {
			long long v;
			memcpy(&v, p, 8);
			p += 8;
			rc = bound ? sqlite3_bind_int64(s, col, v) : OK;
			break;
		}
		case VAL_FLOAT: {
			double v;
			memcpy(&v, p, 8);
			p += 8;
			rc = bound ? sqlite3_bind_double(s, col, v) : OK;
			break;
		}
		case VAL_TEXT: {
			uint32_t len;
			memcpy(&len, p, 4);
			p += 4;
			rc = len > INT32_MAX ? TOOBIG : bound ? sqlite3_bind_text(s, col, len ? (const char *)p : "", (int)len, 0) : OK;
			p += len;
			break;
		}
		default:
			rc = MISUSE;
		}
	}
	*pp = p;
	return rc;
}

// step runs s once; a statement that failed is left for its error to be read.
static int step(sqlite3_stmt *s, int *changes) {
	int rc = sqlite3_step(s);
	if (rc != ROW && rc != DONE) {
		return rc;
	}
	*changes = sqlite3_changes(sqlite3_db_handle(s));
	sqlite3_reset(s);
	return OK;
}

// write_rows writes the n rows of buf: a job's row is inserted, else its
// record updated (upd changes nothing where nothing differs); a usage
// row raises its job's figures. out[i] is row i's outcome. On an error it
// stops, with *failed the row and msg SQLite's message. The statements
// are reset and their bindings cleared before it returns. It holds the
// connection's mutex throughout (what sqlite3_db_mutex is for): each call
// takes it again, which costs its holder far less than a lock. A history
// opened in SQLite's multi-thread mode (_mutex=no) has none to take.
static int write_rows(sqlite3_stmt *ins, sqlite3_stmt *upd, sqlite3_stmt *usage,
		const unsigned char *buf, int n, long long now, unsigned char *out, int *failed, char *msg, int msgcap) {
	const unsigned char *p = buf;
	int rc = OK;
	sqlite3_stmt *last = ins;
	sqlite3_mutex *m = sqlite3_db_mutex(sqlite3_db_handle(ins));
	sqlite3_mutex_enter(m);
	for (int i = 0; i < n && rc == OK; i++) {
		int kind = *p++, changes = 0;
		const unsigned char *values = p;
		if (kind == KIND_USAGE) {
			last = usage;
			rc = bind_row(usage, &p, USAGE_VALUES, now);
			rc = rc == OK ? step(usage, &changes) : rc;
			out[i] = OUT_USAGE;
		} else {
			last = ins;
			rc = bind_row(ins, &p, JOB_VALUES, now);
			rc = rc == OK ? step(ins, &changes) : rc;
			out[i] = OUT_NEW;
			if (rc == OK && changes == 0) {
				last = upd;
				p = values;
				rc = bind_row(upd, &p, JOB_VALUES, now);
				rc = rc == OK ? step(upd, &changes) : rc;
				out[i] = changes ? OUT_UPDATED : OUT_UNCHANGED;
			}
		}
		if (rc != OK) {
			sqlite3 *db = sqlite3_db_handle(last);
			int x = sqlite3_extended_errcode(db);
			*failed = i;
			strncpy(msg, (x & 0xff) == rc ? sqlite3_errmsg(db) : "a value could not be bound", msgcap - 1);
			msg[msgcap - 1] = 0;
			rc = (x & 0xff) == rc ? x : rc;
		}
	}
	sqlite3_stmt *all[] = {ins, upd, usage};
	for (int i = 0; i < 3; i++) {
		sqlite3_reset(all[i]);
		sqlite3_clear_bindings(all[i]);
	}
	sqlite3_mutex_leave(m);
	return rc;
}

static int set_triggers(sqlite3_stmt *s, int on, int *was) {
	return sqlite3_db_config(sqlite3_db_handle(s), DBCONFIG_ENABLE_TRIGGER, on, was);
}
*/
import "C"

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/mattn/go-sqlite3"
)

// writeRows writes the n rows of buf through the import's statements, now
// their time stamp, in one call: through the driver, each value bound is
// a call from Go into C (35 a job), which cost the writer a third of its
// time. It returns each row's outcome, or the row that failed and
// SQLite's error.
func writeRows(st *importStmts, buf rowBuf, n int, now int64) ([]rowOutcome, int, error) {
	if n == 0 {
		return nil, 0, nil
	}
	var handles [3]*C.sqlite3_stmt
	for i, s := range []driver.Stmt{st.insert, st.update, st.usage} {
		h, err := stmtHandle(s)
		if err != nil {
			return nil, 0, err
		}
		handles[i] = h
	}
	out := make([]rowOutcome, n)
	var failed C.int
	var msg [256]C.char
	rc := C.write_rows(handles[0], handles[1], handles[2], (*C.uchar)(unsafe.Pointer(&buf[0])), C.int(n), C.longlong(now),
		(*C.uchar)(unsafe.Pointer(&out[0])), &failed, &msg[0], C.int(len(msg)))
	if rc != 0 {
		code := sqlite3.Error{Code: sqlite3.ErrNo(rc & 0xff), ExtendedCode: sqlite3.ErrNoExtended(rc)}
		return nil, int(failed), &stepError{C.GoString(&msg[0]), code}
	}
	return out, 0, nil
}

// stepError is SQLite's error on a row writeRows wrote: its message, as
// the driver's errors say it, and its code.
type stepError struct {
	msg string
	err sqlite3.Error
}

func (e *stepError) Error() string { return e.msg }

func (e *stepError) Unwrap() error { return e.err }

// stmtHandle is the SQLite statement of a go-sqlite3 statement: the
// driver keeps it unexported (its field s), and offers no call that binds
// a row at once.
func stmtHandle(s driver.Stmt) (*C.sqlite3_stmt, error) {
	v := reflect.ValueOf(s)
	if st, ok := s.(*sqlite3.SQLiteStmt); ok && st != nil {
		if h := v.Elem().FieldByName("s"); h.IsValid() && h.Kind() == reflect.Pointer && !h.IsNil() {
			return (*C.sqlite3_stmt)(h.UnsafePointer()), nil
		}
	}
	return nil, fmt.Errorf("the SQLite driver's statement %T has no SQLite statement in its field s", s)
}

// withoutTriggers turns triggers off on s's connection until restore: the
// statements prepared on it are compiled again without them (SQLite
// expires them when the setting changes).
func withoutTriggers(s driver.Stmt) (restore func(), err error) {
	h, err := stmtHandle(s)
	if err != nil {
		return nil, err
	}
	var was, now C.int // SQLite reports the setting as it is after the call
	if C.set_triggers(h, -1, &was) != 0 || C.set_triggers(h, 0, &now) != 0 || now != 0 {
		return nil, errors.New("the SQLite connection's triggers could not be turned off")
	}
	return func() { C.set_triggers(h, was, &now) }, nil
}
