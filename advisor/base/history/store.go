// Package history is the job history: a SQLite database (one file, WAL)
// that links scripts (by fingerprint) to their sweeps and submissions, and
// those to the jobs Slurm accounted for and the evidence their output held.
// It returns records and judges nothing (the advisor does). The schema is
// versioned; newer migadvisors migrate it forward and older ones refuse it
// rather than misread it. Writers never lose a record to a lock: the
// wrapper's submissions wait in a spool that the next read-write open
// moves in. A read writes nothing (OpenToRead).
package history

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Store is an open history database.
type Store struct {
	db   *sql.DB
	path string
	// schema is the version of the schema read: SchemaVersion, or an older
	// one that a read-only open reads (oldestReadable at least).
	schema int
	// inMemory: a history stored nowhere (openEmpty), which no other
	// process can migrate.
	inMemory bool
	// setAside are the spooled records this Store's drains could not read
	// (DrainSpool), for its opener to say.
	setAside []SetAside
	// spooled are the submissions in the spool when OpenToRead opened it,
	// read and left there: Tracked lists them beside the history's.
	spooled []Submission
	// tidy, of a read-only Store, removes the -wal and -shm files its open
	// made (walFilesTidier) once it is closed.
	tidy func()
}

// migrations bring the schema from version i to i+1. Never edit one that has
// shipped: add a new one.
var migrations = []string{
	// 1: scripts, sweeps and their variants.
	`CREATE TABLE scripts (
		fingerprint TEXT PRIMARY KEY,
		path        TEXT NOT NULL,      -- where it was last seen
		first_seen  INTEGER NOT NULL,   -- unix seconds
		last_seen   INTEGER NOT NULL
	);
	CREATE TABLE sweeps (
		id          INTEGER PRIMARY KEY,
		dir         TEXT NOT NULL UNIQUE, -- absolute path of the sweep directory
		fingerprint TEXT NOT NULL REFERENCES scripts(fingerprint),
		site        TEXT NOT NULL,
		created     INTEGER NOT NULL
	);
	CREATE TABLE variants (
		sweep_id  INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
		profile   TEXT NOT NULL,
		file      TEXT NOT NULL,
		request   TEXT NOT NULL,
		job_name  TEXT NOT NULL,
		PRIMARY KEY (sweep_id, profile)
	);
	CREATE INDEX sweeps_by_fingerprint ON sweeps(fingerprint);`,

	// 2: jobs from accounting, the submissions that link them to scripts, and
	// the evidence of their output files.
	`CREATE TABLE jobs (
		cluster       TEXT NOT NULL,
		job_key       TEXT NOT NULL,    -- JobIDRaw: unique within the cluster
		updated       INTEGER NOT NULL, -- unix seconds of the last change
		job_id        TEXT NOT NULL,    -- as users see it: 123, 123_4, 123+0
		array_job     TEXT NOT NULL,    -- the id sbatch printed
		name TEXT, user TEXT, account TEXT, partition TEXT, qos TEXT, node_list TEXT, work_dir TEXT,
		state         TEXT NOT NULL,
		cancelled_by  TEXT,
		exit_code     INTEGER,
		exit_signal   INTEGER,
		submit INTEGER, start INTEGER, end INTEGER,  -- unix seconds
		elapsed_s     INTEGER,
		timelimit_min INTEGER,          -- 0: unlimited; NULL: unknown or the partition's
		nodes INTEGER, cpus INTEGER,
		req_mem_mib   REAL,
		max_rss_mib   REAL,             -- max over steps of MaxRSS x NTasks
		gpu_type      TEXT NOT NULL,    -- typed GRES: a100_10g
		gpu_count     INTEGER NOT NULL,
		profile       TEXT NOT NULL,    -- the site's profile for gpu_type, '' if none
		gpu_mem_mib   REAL,             -- gres/gpumem from accounting
		gpu_util      REAL,             -- gres/gpuutil from accounting
		stub          INTEGER NOT NULL, -- slurmdbd's placeholder for a short job
		PRIMARY KEY (cluster, job_key)
	);
	-- Array tasks and het components other than the first: the rest are found by job_key.
	CREATE INDEX jobs_by_array_job ON jobs(cluster, array_job) WHERE array_job <> job_key;
	CREATE TABLE submissions (
		cluster     TEXT NOT NULL,
		job_id      TEXT NOT NULL,     -- the id sbatch printed
		fingerprint TEXT NOT NULL REFERENCES scripts(fingerprint),
		script      TEXT NOT NULL,     -- the file submitted (a sweep's variant or the user's script)
		profile     TEXT NOT NULL,     -- the profile asked for, '' if none
		sweep_dir   TEXT NOT NULL,
		workload    TEXT NOT NULL,
		work_dir    TEXT NOT NULL,
		stdout      TEXT NOT NULL,     -- from scontrol at submission, '' if unknown
		stderr      TEXT NOT NULL,
		submitted   INTEGER NOT NULL,
		PRIMARY KEY (cluster, job_id)
	);
	CREATE INDEX submissions_by_fingerprint ON submissions(fingerprint);
	CREATE TABLE outputs (
		cluster      TEXT NOT NULL,
		job_key      TEXT NOT NULL,
		path         TEXT NOT NULL,
		size         INTEGER NOT NULL,
		mtime        INTEGER NOT NULL,
		truncated    INTEGER NOT NULL,
		gpu_oom      TEXT,              -- the source (pytorch, jax, ...) of a GPU OOM message
		gpu_oom_line INTEGER,
		gpu_oom_text TEXT,
		gpu_need_mib REAL,              -- lower bound from the OOM message
		host_oom     INTEGER NOT NULL,
		host_oom_text TEXT,
		time_limit   INTEGER NOT NULL,
		cancelled    INTEGER NOT NULL,
		work REAL, work_unit TEXT, work_source TEXT,
		metrics      TEXT,              -- JSON object
		gpu_peak_mib REAL, gpu_total_mib REAL, gpu_device TEXT,  -- the monitor's summary line
		PRIMARY KEY (cluster, job_key)
	);`,

	// 3: the rest of the monitor's figures.
	`ALTER TABLE outputs ADD COLUMN gpu_used_peak_mib REAL;  -- the device's peak in use (gpu_peak_mib: the job's processes')
	ALTER TABLE outputs ADD COLUMN gpu_profile TEXT;          -- MIG profile the monitor saw
	ALTER TABLE outputs ADD COLUMN gpu_util TEXT;             -- supported, unsupported (A100 MIG), error
	ALTER TABLE outputs ADD COLUMN gpu_util_mean REAL;
	ALTER TABLE outputs ADD COLUMN gpu_util_max REAL;
	ALTER TABLE outputs ADD COLUMN gpu_samples INTEGER;
	ALTER TABLE outputs ADD COLUMN gpu_source TEXT;           -- line (job output) or summary (migadvisor-<job>.json)`,

	// 4: queue waits per GPU type, for turnaround advice.
	`CREATE INDEX jobs_by_gpu_type ON jobs(gpu_type, submit);`,

	// 5: jobs whose batch script slurmdbd did not have, so that collect
	// --scripts asks for each once.
	`CREATE TABLE unscripted (
		cluster TEXT NOT NULL,
		job_key TEXT NOT NULL,
		PRIMARY KEY (cluster, job_key)
	);`,

	// 6: the software a job ran (MIGADVISOR_VERSION lines), for the
	// provenance of generated docs, and reports by workload.
	`ALTER TABLE outputs ADD COLUMN versions TEXT;  -- JSON object: name -> version
	CREATE INDEX submissions_by_workload ON submissions(workload);`,

	// 7: where the next incremental collect starts, per selection, and the
	// jobs whose record may still change (not ended, or slurmdbd's
	// placeholder): a few among millions, which it asks about again.
	`CREATE TABLE watermarks (
		scope   TEXT PRIMARY KEY, -- the selection: clusters and users (or all users)
		since   INTEGER NOT NULL, -- unix seconds: the next sacct starts here
		updated INTEGER NOT NULL
	);
	ALTER TABLE jobs ADD COLUMN unsettled INTEGER NOT NULL DEFAULT 0;  -- not ended, or a placeholder
	UPDATE jobs SET unsettled = 1 WHERE state IN ` + activeStateList + ` OR stub = 1;
	CREATE INDEX jobs_unsettled ON jobs(cluster, user) WHERE unsettled = 1;`,

	// 8: the cluster name the history last filed jobs under (the one to use
	// when Slurm cannot be asked); what finds the runs of a script's earlier
	// versions: its path, and the job names and users each fingerprint's
	// jobs had when they were linked to it (slurmdbd's scripts: a site-wide
	// history's), filled for those linked so far; and the submissions made
	// by users (sweep, track, the wrapper) apart from those made from
	// slurmdbd's scripts, which are as many as the jobs.
	`CREATE TABLE settings (
		key   TEXT PRIMARY KEY,
		value TEXT NOT NULL
	);
	CREATE INDEX scripts_by_path ON scripts(path);
	CREATE TABLE script_names (
		name        TEXT NOT NULL,  -- the job's name, as sacct gives it
		user        TEXT NOT NULL,
		fingerprint TEXT NOT NULL,
		PRIMARY KEY (name, user, fingerprint)
	) WITHOUT ROWID;
	INSERT OR IGNORE INTO script_names(name, user, fingerprint)
		SELECT j.name, coalesce(j.user, ''), s.fingerprint FROM submissions s
		JOIN jobs j ON j.cluster = s.cluster AND j.job_key = s.job_id WHERE j.name IS NOT NULL;
	CREATE INDEX submissions_made_here ON submissions(fingerprint) WHERE script NOT LIKE 'sacct:%';`,

	// 9: the monitor's memory utilization (NVML's: the share of time device
	// memory was read or written), beside its GPU utilization.
	`ALTER TABLE outputs ADD COLUMN gpu_mem_util_mean REAL;
	ALTER TABLE outputs ADD COLUMN gpu_mem_util_max REAL;`,

	// 10: the runs of a job's emulation (migadvisor emulate: the job's
	// command once per MIG profile on a whole GPU, under CUDA MPS limits),
	// each with the evidence of its own output.
	`CREATE TABLE emulated_runs (
		cluster     TEXT NOT NULL,
		job_key     TEXT NOT NULL,  -- the job the emulation ran in
		profile     TEXT NOT NULL,  -- the profile emulated; full: the whole GPU
		gpu         TEXT,           -- the GPU that ran it
		sm_pct      INTEGER,        -- MPS active-thread percentage; 100 with no limit
		mem_limit   TEXT,           -- CUDA_MPS_PINNED_DEVICE_MEM_LIMIT, '' with none
		outcome     TEXT,           -- completed, failed, budget
		exit_status INTEGER,
		seconds     REAL,
		evidence    TEXT,           -- JSON of slurm.OutputEvidence: what its output showed
		PRIMARY KEY (cluster, job_key, profile)
	);`,

	// 11: the share of the whole GPU an emulated run really had, measured
	// (its SMs at its clock, its copy bandwidth): MPS leaves an emulated
	// slice more bandwidth than the real slice has, and the runtime model
	// scales its time from where it ran.
	`ALTER TABLE emulated_runs ADD COLUMN sm_share REAL;
	ALTER TABLE emulated_runs ADD COLUMN bw_share REAL;`,

	// 12: the outbox of a history whose changes go on to a site store in
	// MariaDB (advisor/base/history/mariadb): while outbox_on holds a row,
	// triggers note the key of every row written or deleted.
	outboxMigration,

	// 13: what Princeton's jobstats recorded of a job's GPUs (its summary in
	// sacct's AdminComment): the largest memory in use of its GPUs, sampled
	// every 30 s or so, that GPU's total, and the mean utilization.
	`ALTER TABLE jobs ADD COLUMN jobstats_peak_mib REAL;
	ALTER TABLE jobs ADD COLUMN jobstats_total_mib REAL;
	ALTER TABLE jobs ADD COLUMN jobstats_util REAL;`,
	// 14: submissions whose job id is not known yet: the sbatch wrapper's
	// advice beside Slurm's sbatch (the shim runs sbatch itself) records
	// the submission without sbatch's answer; collect links it to its job
	// by user, job name, directory and submit time (LinkPending).
	`CREATE TABLE pending_submissions (
		fingerprint TEXT NOT NULL REFERENCES scripts(fingerprint),
		submitted   INTEGER NOT NULL,  -- unix microseconds, as the wrapper saw them
		token       TEXT NOT NULL,     -- the wrapper's: one submission, whichever process drains it
		user        TEXT NOT NULL,
		job_name    TEXT NOT NULL,     -- the name sbatch gives the job
		work_dir    TEXT NOT NULL,
		cluster     TEXT NOT NULL,     -- '' when sbatch was not told one
		script      TEXT NOT NULL,
		profile     TEXT NOT NULL,
		PRIMARY KEY (fingerprint, submitted, token)
	);`,
	// 15: the hash of the script's bytes a pending submission was made
	// with (ScriptHash; '' for one recorded before), which collect checks
	// against the script slurmdbd stored for the job it links it to.
	`ALTER TABLE pending_submissions ADD COLUMN script_hash TEXT NOT NULL DEFAULT '';`,

	// 16: the first line of a job's output that reads as an error, and its
	// file: what a script that fails on every profile says of itself; and
	// the settings the job ran with (MIGADVISOR_SETTING), which change what
	// its memory peak proves.
	`ALTER TABLE outputs ADD COLUMN error_file TEXT;
	ALTER TABLE outputs ADD COLUMN error_line INTEGER;
	ALTER TABLE outputs ADD COLUMN error_text TEXT;
	ALTER TABLE outputs ADD COLUMN settings TEXT;`,

	// 17: what recommend reads stays a look-up however many jobs the
	// history holds: the jobs of a job name (a script's unlinked jobs;
	// createNameIndex, which an import into an empty history defers), and
	// the queue waits from the GPU type index alone, not from a row of the
	// table per job.
	`CREATE INDEX jobs_by_name ON jobs(name);
	DROP INDEX jobs_by_gpu_type;
	CREATE INDEX jobs_by_gpu_type ON jobs(gpu_type, submit, start, stub);`,

	// 18: the reference benchmark a job's output resembles (collect's scan
	// of its lines, slurm.OutputWorkload): the workload of a job whose
	// script the history does not hold, or whose script says nothing of it,
	// which its runtime prior scales it like.
	`ALTER TABLE outputs ADD COLUMN resembles TEXT;`,

	// 19: the newest jobs are read by walking this index (newestFirst), not
	// by sorting every job: a user's index refresh reads the newest few
	// thousand GPU jobs for their sessions, which sorted a million jobs in
	// a site's history (createSubmitIndex, which an import into an empty
	// history defers).
	createSubmitIndex + `;`,
}

// schemaMemUtil is the first schema with the outputs' memory utilization;
// a read-only history of an older one reads it as unknown.
const schemaMemUtil = 9

// schemaEmulated is the first schema with emulated runs; a read-only
// history of an older one has none.
const schemaEmulated = 10

// schemaRanAt is the first schema with emulated runs' measured shares; a
// read-only history of an older one reads them as unknown.
const schemaRanAt = 11

// schemaJobstats is the first schema with the jobs' jobstats figures; a
// read-only history of an older one reads them as unknown.
const schemaJobstats = 13

// schemaErrorLine is the first schema with the outputs' first error line;
// a read-only history of an older one has none.
const schemaErrorLine = 16

// schemaResembles is the first schema with the workload an output
// resembles; a read-only history of an older one knows none.
const schemaResembles = 18

// oldestReadable is the oldest schema a read-only open reads: reading
// does without what was added since (no cluster name is remembered, and
// earlier versions are found by path and through the users' own
// submissions only), so a site-wide history that an older migadvisor wrote
// stays readable to the users who cannot migrate it.
const oldestReadable = 7

// SchemaVersion is the schema this build writes.
var SchemaVersion = len(migrations)

// Open opens (creating if needed) the history at path: the directory 0700,
// the file 0600, WAL journal, a busy timeout so concurrent users wait instead
// of failing, and the schema migrated to SchemaVersion. Submissions spooled
// while the database was locked are moved in.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, Options{})
}

// Options tune how a history is opened.
type Options struct {
	// BusyTimeout is how long a write waits for another process's write lock;
	// 0 means DefaultBusyTimeout.
	BusyTimeout time.Duration
	// ReadOnly opens an existing history for reading only (a site-wide one
	// that admins fill, or the user's own from the sbatch wrapper): nothing
	// is created, migrated or drained, and a schema newer than this build's
	// (or too old to read) is an error.
	ReadOnly bool
	// Shared creates a history that every user may read (the file 0644 in
	// a 0755 directory) instead of its owner alone: the site-wide one,
	// which its admins write and the users' commands open read-only.
	Shared bool
}

// DefaultBusyTimeout is long enough for any import batch to commit.
const DefaultBusyTimeout = 10 * time.Second

// OpenWith opens the history at path with opt.
func OpenWith(ctx context.Context, path string, opt Options) (*Store, error) {
	if opt.ReadOnly {
		return openReadOnly(ctx, path)
	}
	if isSnapshot(path) {
		return nil, fmt.Errorf("history %s: %w", path, ErrSnapshot)
	}
	if opt.BusyTimeout <= 0 {
		opt.BusyTimeout = DefaultBusyTimeout
	}
	dirMode, fileMode := os.FileMode(0o700), os.FileMode(0o600)
	if opt.Shared {
		dirMode, fileMode = 0o755, 0o644
	}
	if info, err := os.Stat(path); err == nil && info.Mode().Perm()&0o004 != 0 {
		opt.Shared = true // made readable by all (the site's, from an admin's chmod)
	}
	created, err := mkdirAll(filepath.Dir(path), dirMode)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	if err := createFile(path, fileMode); err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	if err := retryBusy(ctx, opt.BusyTimeout, func() error { return setPageSize(ctx, path, opt.BusyTimeout) }); err != nil {
		return nil, Explain(path, fmt.Errorf("history %s: %w", path, err))
	}
	// A newer migadvisor's history is refused before SQLite opens it: the
	// open would turn on WAL, which rewrites the header of a history in
	// rollback-journal mode and leaves -wal and -shm files beside it.
	if v, ok := headerVersion(path); ok && v > SchemaVersion {
		return nil, fmt.Errorf("history %s: %w", path, newerSchema(v))
	}
	if opt.Shared {
		if err := readableByAll(path, created); err != nil {
			return nil, fmt.Errorf("history %s: %w", path, err)
		}
	}
	// Every transaction here writes, so each takes the write lock when it
	// begins (_txlock=immediate): a deferred one that read first and then
	// wanted to write would fail at once with "database is locked" when
	// another process wrote in between, whatever the busy timeout.
	// database/sql never hands one connection to two goroutines at once,
	// so SQLite's own lock of each connection is not taken (_mutex=no: its
	// multi-thread mode): an import's writer took it at each of the 35
	// values it binds a job, 4% of a million-job collect.
	dsn := fmt.Sprintf("%s?_journal_mode=WAL&_busy_timeout=%d&_foreign_keys=on&_synchronous=NORMAL&_txlock=immediate&_mutex=no",
		fileURI(path), opt.BusyTimeout.Milliseconds())
	driver := "sqlite3"
	if opt.Shared {
		driver = sharedDriver
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	s := &Store{db: db, path: path, schema: SchemaVersion}
	if err := retryBusy(ctx, opt.BusyTimeout, func() error { return s.migrate(ctx) }); err != nil {
		db.Close()
		return nil, Explain(path, fmt.Errorf("history %s: %w", path, err))
	}
	// A drain that fails (the lock is busy) leaves the records for the next
	// Open: the history is usable without them.
	_, _ = s.DrainSpool(ctx)
	return s, nil
}

// fileURI is path as an SQLite file: URI, whose query and fragment start at
// the first '?' and '#' and whose '%' escapes: a history may be anywhere.
func fileURI(path string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// sharedDriver opens a history that others read: its WAL and shared-memory
// files stay beside it when the last connection closes (they take the
// database's mode, 0644). A reader who cannot write to the directory can
// open a WAL database only when both are there: SQLite cannot create them
// for it.
const sharedDriver = "sqlite3_persistent_wal"

// fcntlPersistWAL is SQLITE_FCNTL_PERSIST_WAL.
const fcntlPersistWAL = 10

// sqliteCode names the errors of SQLite's that the history tells apart
// (sqlite_cgo.go maps them to SQLite's codes).
type sqliteCode int

const (
	codeBusy sqliteCode = iota
	codeLocked
	codeReadonly
	codeCantOpen
	codeNotADB
	codeCorrupt
	codeFull
)

// retryBusy runs fn again while SQLite refuses it at once as busy, for up
// to timeout. Only the first use of a new history needs it: two
// connections that turn on WAL together deadlock, and SQLite refuses one
// without waiting on the busy timeout.
func retryBusy(ctx context.Context, timeout time.Duration, fn func() error) error {
	deadline := time.Now().Add(timeout)
	delay := 5 * time.Millisecond
	for {
		err := fn()
		if err == nil || !isSQLite(err, codeBusy, codeLocked) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

// openReadOnly opens an existing history without writing to it.
func openReadOnly(ctx context.Context, path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	if isSnapshot(path) {
		// A published snapshot is never written in place: no lock, no
		// journal, safe on a file system shared by many hosts.
		s, err := openChecked(ctx, path, "mode=ro&immutable=1")
		if err != nil {
			return nil, asCorrupt(path, fmt.Errorf("history %s: %w", path, err))
		}
		return s, nil
	}
	tidy := walFilesTidier(path)
	s, err := openChecked(ctx, path, "mode=ro&_busy_timeout=1000")
	if err != nil && cannotMakeWALFiles(err) {
		// A WAL history whose -wal and -shm files are gone (closed by a
		// migadvisor older than Shared, or made readable by a chmod) in a
		// directory this user cannot write: SQLite cannot make them for a
		// reader. With no -wal file no writer is at work, so the database
		// file alone is the history.
		if _, werr := os.Stat(path + "-wal"); errors.Is(werr, fs.ErrNotExist) {
			s, err = openChecked(ctx, path, "mode=ro&immutable=1")
		}
	}
	var tooOld *OldSchemaError
	if errors.As(err, &tooOld) {
		tidy()
		return nil, err // a sentence that names the history
	}
	if err != nil {
		tidy()
		return nil, asCorrupt(path, fmt.Errorf("history %s: %w", path, err))
	}
	s.tidy = tidy
	return s, nil
}

// walFilesTidier returns what removes the -wal and -shm files that a
// read-only open of the WAL history at path is about to make, where they
// are not there yet: SQLite makes them for a reader, which cannot remove
// them as the last connection to close does (that takes a checkpoint, a
// write). It opens the history again, to read its version alone, on a
// connection that may checkpoint: as the last to close it checkpoints an
// empty WAL, which leaves the database's file as it was, and removes them,
// under SQLite's own locks; where another connection is open they stay
// hers. Where they were there before, it does nothing.
func walFilesTidier(path string) func() {
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, fs.ErrNotExist) {
		return func() {}
	}
	return func() {
		if _, err := os.Stat(path + "-wal"); err != nil {
			return
		}
		db, err := sql.Open("sqlite3", fileURI(path)+"?_busy_timeout=100&_query_only=1")
		if err != nil {
			return
		}
		var v int
		_ = db.QueryRow("PRAGMA user_version").Scan(&v)
		db.Close()
	}
}

// openChecked opens the history with the URI parameters params and checks
// that this build reads its schema: this build's, or an older one down to
// oldestReadable.
func openChecked(ctx context.Context, path, params string) (*Store, error) {
	db, err := sql.Open("sqlite3", fileURI(path)+"?"+params)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, path: path}
	v, err := s.Version(ctx)
	s.schema = v
	switch {
	case err != nil:
	case v > SchemaVersion:
		err = newerSchema(v)
	case v < oldestReadable:
		err = &OldSchemaError{Path: path, Version: v}
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// cannotMakeWALFiles reports SQLite's refusal to open a WAL database for a
// reader that may not create its -shm file.
func cannotMakeWALFiles(err error) bool {
	return isSQLite(err, codeReadonly, codeCantOpen)
}

// mkdirAll is os.MkdirAll, and returns the directories it created, the
// outermost first.
func mkdirAll(dir string, mode os.FileMode) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		missing = append([]string{d}, missing...)
	}
	return missing, os.MkdirAll(dir, mode)
}

// readableByAll gives a shared history the modes every user's commands
// need to read it whatever the umask of the admin who runs collect (077
// under many sudo setups would leave it theirs alone): the directories
// this open created 0755, the file and its WAL and shared-memory files
// readable by all. A history made private earlier is repaired the same
// way; the directories it already had are the admin's to choose.
func readableByAll(path string, createdDirs []string) error {
	for _, d := range createdDirs {
		if err := os.Chmod(d, 0o755); err != nil {
			return err
		}
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		info, err := os.Stat(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if perm := info.Mode().Perm(); perm&0o044 != 0o044 {
			if err := os.Chmod(f, perm|0o044); err != nil {
				return err
			}
		}
	}
	return nil
}

// createFile makes the history's empty file with mode (less the umask),
// so that SQLite never creates it with the umask's wider one; its WAL and
// shared-memory files take the same mode from it.
func createFile(path string, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, mode)
	if err != nil {
		return err
	}
	return f.Close()
}

// pageSize is a new history's page size, four times SQLite's default: a
// site's first collect of a million jobs writes a quarter of the pages to
// the WAL, each a frame with its header, checksum and write, and copies a
// quarter back; it took 12% less time (paired runs, issue 42). A look-up
// reads 16 KiB where it read 4, from the page cache.
const pageSize = 16384

// setPageSize gives the history at path, an empty file just created, its
// page size and WAL mode, in that order: once in WAL mode a database's page
// size stays what it is. A history with pages is left as it is (one made
// before keeps its 4 KiB); so is one another process made meanwhile: two
// turning on WAL at once, one is refused (retryBusy), and finds it made.
func setPageSize(ctx context.Context, path string, busy time.Duration) error {
	if info, err := os.Stat(path); err != nil || info.Size() > 0 {
		return err
	}
	db, err := sql.Open("sqlite3", fileURI(path)+fmt.Sprintf("?_busy_timeout=%d", busy.Milliseconds()))
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, fmt.Sprintf(`PRAGMA page_size = %d; PRAGMA journal_mode = WAL`, pageSize)); err != nil {
		return fmt.Errorf("set its page size: %w", err)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error {
	err := s.db.Close()
	if s.tidy != nil {
		s.tidy()
	}
	return err
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Absent reports whether the history read has no file: OpenToRead found
// none at its path and made none (a mistyped path reads as empty).
func (s *Store) Absent() bool { return s.inMemory && !exists(s.path) }

// Version reads the schema version of the open database.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

// ErrNewerSchema means the database was written by a newer migadvisor.
var ErrNewerSchema = errors.New("the history was written by a newer migadvisor")

// newerSchema refuses a history of schema v, newer than this build's, and
// says the way out.
func newerSchema(v int) error {
	return fmt.Errorf("%w (schema %d; this one reads up to %d): use that migadvisor, or a newer one, with it; this one leaves it as it is",
		ErrNewerSchema, v, SchemaVersion)
}

// headerVersion is the schema version in the header of the SQLite file at
// path (PRAGMA user_version: 4 bytes, big-endian, at offset 60), read as
// bytes, without opening it as a database: false where it is not one (an
// empty file, a damaged one). A history in WAL mode may hold a newer
// version in its -wal file: the migration reads that one, and refuses it
// without changing the header, which WAL mode already has.
func headerVersion(path string) (int, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var h [64]byte
	if _, err := f.ReadAt(h[:], 0); err != nil || !bytes.HasPrefix(h[:], []byte("SQLite format 3\x00")) {
		return 0, false
	}
	return int(int32(binary.BigEndian.Uint32(h[60:]))), true
}

// Sweep is what the history keeps of a sweep.
type Sweep struct {
	Dir         string
	Script      string
	Fingerprint string
	Site        string
	Created     time.Time
	Variants    []Variant
}

// Variant is one profile's script of a sweep.
type Variant struct {
	Profile, File, Request, JobName string
}

// RecordSweep stores a sweep and its script in one transaction. Sweeping into
// the same directory again replaces the earlier record.
func (s *Store) RecordSweep(ctx context.Context, sw Sweep) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record sweep: %w", err)
	}
	defer tx.Rollback()
	now := sw.Created.Unix()
	if _, err := tx.ExecContext(ctx, `INSERT INTO scripts(fingerprint, path, first_seen, last_seen) VALUES (?, ?, ?, ?)
		ON CONFLICT(fingerprint) DO UPDATE SET path = excluded.path, last_seen = excluded.last_seen`,
		sw.Fingerprint, sw.Script, now, now); err != nil {
		return fmt.Errorf("record sweep: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sweeps WHERE dir = ?`, sw.Dir); err != nil {
		return fmt.Errorf("record sweep: %w", err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO sweeps(dir, fingerprint, site, created) VALUES (?, ?, ?, ?)`,
		sw.Dir, sw.Fingerprint, sw.Site, now)
	if err != nil {
		return fmt.Errorf("record sweep: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("record sweep: %w", err)
	}
	for _, v := range sw.Variants {
		if _, err := tx.ExecContext(ctx, `INSERT INTO variants(sweep_id, profile, file, request, job_name) VALUES (?, ?, ?, ?, ?)`,
			id, v.Profile, v.File, v.Request, v.JobName); err != nil {
			return fmt.Errorf("record sweep: %w", err)
		}
	}
	return tx.Commit()
}

// Sweeps lists the recorded sweeps of a script fingerprint, newest first.
func (s *Store) Sweeps(ctx context.Context, fingerprint string) ([]Sweep, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT sw.id, sw.dir, sc.path, sw.site, sw.created FROM sweeps sw
		JOIN scripts sc USING (fingerprint) WHERE sw.fingerprint = ? ORDER BY sw.created DESC, sw.id DESC`, fingerprint)
	if err != nil {
		return nil, fmt.Errorf("list sweeps: %w", err)
	}
	defer rows.Close()
	var out []Sweep
	var ids []int64
	for rows.Next() {
		var id, created int64
		sw := Sweep{Fingerprint: fingerprint}
		if err := rows.Scan(&id, &sw.Dir, &sw.Script, &sw.Site, &created); err != nil {
			return nil, fmt.Errorf("list sweeps: %w", err)
		}
		sw.Created = time.Unix(created, 0).UTC()
		out, ids = append(out, sw), append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sweeps: %w", err)
	}
	for i, id := range ids {
		if out[i].Variants, err = s.variants(ctx, id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Store) variants(ctx context.Context, sweepID int64) ([]Variant, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT profile, file, request, job_name FROM variants WHERE sweep_id = ? ORDER BY rowid`, sweepID)
	if err != nil {
		return nil, fmt.Errorf("list variants: %w", err)
	}
	defer rows.Close()
	var out []Variant
	for rows.Next() {
		var v Variant
		if err := rows.Scan(&v.Profile, &v.File, &v.Request, &v.JobName); err != nil {
			return nil, fmt.Errorf("list variants: %w", err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
