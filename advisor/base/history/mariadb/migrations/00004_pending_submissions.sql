-- Submissions whose job id is not known yet (history schema 14): the sbatch
-- wrapper's advice beside Slurm's sbatch records them without sbatch's
-- answer, and collect links each to its job.

-- +goose Up
CREATE TABLE IF NOT EXISTS pending_submissions (
	fingerprint VARCHAR(128) NOT NULL,
	submitted   BIGINT NOT NULL,
	token       VARCHAR(64) NOT NULL,
	user        VARCHAR(128) NOT NULL,
	job_name    VARCHAR(255) NOT NULL,
	work_dir    TEXT NOT NULL,
	cluster     VARCHAR(128) NOT NULL,
	script      TEXT NOT NULL,
	profile     VARCHAR(128) NOT NULL,
	PRIMARY KEY (fingerprint, submitted, token)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE pending_submissions;
