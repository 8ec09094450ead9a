-- The site history in MariaDB/MySQL: the tables and columns of the SQLite
-- history's schema 11 (advisor/history/store.go), in MySQL's types. Text
-- that is part of a key is VARCHAR (a key holds at most 3072 bytes, 768
-- characters of utf8mb4); the binary collation compares it as SQLite does,
-- case and all. TestMariaDBSchemaIsTheHistorys keeps the two the same.
-- MySQL commits each CREATE TABLE on its own, so a migration cut short
-- leaves some tables and no version: IF NOT EXISTS lets the next one finish.

-- +goose Up
CREATE TABLE IF NOT EXISTS scripts (
	fingerprint VARCHAR(128) NOT NULL PRIMARY KEY,
	path        TEXT NOT NULL,
	first_seen  BIGINT NOT NULL,
	last_seen   BIGINT NOT NULL,
	INDEX scripts_by_path (path(255))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS sweeps (
	id          BIGINT NOT NULL PRIMARY KEY,
	dir         VARCHAR(768) NOT NULL UNIQUE,
	fingerprint VARCHAR(128) NOT NULL,
	site        TEXT NOT NULL,
	created     BIGINT NOT NULL,
	INDEX sweeps_by_fingerprint (fingerprint)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS variants (
	sweep_id BIGINT NOT NULL,
	profile  VARCHAR(128) NOT NULL,
	file     TEXT NOT NULL,
	request  TEXT NOT NULL,
	job_name TEXT NOT NULL,
	PRIMARY KEY (sweep_id, profile)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS jobs (
	cluster       VARCHAR(128) NOT NULL,
	job_key       VARCHAR(128) NOT NULL,
	updated       BIGINT NOT NULL,
	job_id        VARCHAR(128) NOT NULL,
	array_job     VARCHAR(128) NOT NULL,
	name TEXT, user VARCHAR(128), account TEXT, `partition` TEXT, qos TEXT, node_list TEXT, work_dir TEXT,
	state         VARCHAR(64) NOT NULL,
	cancelled_by  TEXT,
	exit_code     BIGINT,
	exit_signal   BIGINT,
	submit BIGINT, start BIGINT, `end` BIGINT,
	elapsed_s     BIGINT,
	timelimit_min BIGINT,
	nodes BIGINT, cpus BIGINT,
	req_mem_mib   DOUBLE,
	max_rss_mib   DOUBLE,
	gpu_type      VARCHAR(128) NOT NULL,
	gpu_count     BIGINT NOT NULL,
	profile       VARCHAR(128) NOT NULL,
	gpu_mem_mib   DOUBLE,
	gpu_util      DOUBLE,
	stub          BIGINT NOT NULL,
	unsettled     BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (cluster, job_key),
	INDEX jobs_by_array_job (cluster, array_job),
	INDEX jobs_by_gpu_type (gpu_type, submit),
	INDEX jobs_unsettled (unsettled, cluster, user)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS submissions (
	cluster     VARCHAR(128) NOT NULL,
	job_id      VARCHAR(128) NOT NULL,
	fingerprint VARCHAR(128) NOT NULL,
	script      TEXT NOT NULL,
	profile     VARCHAR(128) NOT NULL,
	sweep_dir   TEXT NOT NULL,
	workload    VARCHAR(255) NOT NULL,
	work_dir    TEXT NOT NULL,
	stdout      TEXT NOT NULL,
	stderr      TEXT NOT NULL,
	submitted   BIGINT NOT NULL,
	PRIMARY KEY (cluster, job_id),
	INDEX submissions_by_fingerprint (fingerprint),
	INDEX submissions_by_workload (workload)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS outputs (
	cluster      VARCHAR(128) NOT NULL,
	job_key      VARCHAR(128) NOT NULL,
	path         TEXT NOT NULL,
	size         BIGINT NOT NULL,
	mtime        BIGINT NOT NULL,
	truncated    BIGINT NOT NULL,
	gpu_oom      TEXT,
	gpu_oom_line BIGINT,
	gpu_oom_text TEXT,
	gpu_need_mib DOUBLE,
	host_oom     BIGINT NOT NULL,
	host_oom_text TEXT,
	time_limit   BIGINT NOT NULL,
	cancelled    BIGINT NOT NULL,
	work DOUBLE, work_unit TEXT, work_source TEXT,
	metrics      MEDIUMTEXT,
	gpu_peak_mib DOUBLE, gpu_total_mib DOUBLE, gpu_device TEXT,
	gpu_used_peak_mib DOUBLE,
	gpu_profile  TEXT,
	gpu_util     TEXT,
	gpu_util_mean DOUBLE,
	gpu_util_max DOUBLE,
	gpu_samples  BIGINT,
	gpu_source   TEXT,
	versions     MEDIUMTEXT,
	gpu_mem_util_mean DOUBLE,
	gpu_mem_util_max DOUBLE,
	PRIMARY KEY (cluster, job_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS unscripted (
	cluster VARCHAR(128) NOT NULL,
	job_key VARCHAR(128) NOT NULL,
	PRIMARY KEY (cluster, job_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS watermarks (
	scope   VARCHAR(768) NOT NULL PRIMARY KEY,
	since   BIGINT NOT NULL,
	updated BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS settings (
	`key` VARCHAR(255) NOT NULL PRIMARY KEY,
	value TEXT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS script_names (
	name        VARCHAR(384) NOT NULL,
	user        VARCHAR(128) NOT NULL,
	fingerprint VARCHAR(128) NOT NULL,
	PRIMARY KEY (name, user, fingerprint)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS emulated_runs (
	cluster     VARCHAR(128) NOT NULL,
	job_key     VARCHAR(128) NOT NULL,
	profile     VARCHAR(128) NOT NULL,
	gpu         TEXT,
	sm_pct      BIGINT,
	mem_limit   TEXT,
	outcome     TEXT,
	exit_status BIGINT,
	seconds     DOUBLE,
	evidence    MEDIUMTEXT,
	sm_share    DOUBLE,
	bw_share    DOUBLE,
	PRIMARY KEY (cluster, job_key, profile)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE emulated_runs, script_names, settings, watermarks, unscripted, outputs, submissions, jobs, variants, sweeps, scripts;
