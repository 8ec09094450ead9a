-- History schema 13: what jobstats recorded of a job's GPUs. One statement, so that
-- MySQL (which has no ADD COLUMN IF NOT EXISTS) adds all three or none.

-- +goose Up
ALTER TABLE jobs ADD COLUMN jobstats_peak_mib DOUBLE,
	ADD COLUMN jobstats_total_mib DOUBLE,
	ADD COLUMN jobstats_util DOUBLE;

-- +goose Down
ALTER TABLE jobs DROP COLUMN jobstats_util, DROP COLUMN jobstats_total_mib, DROP COLUMN jobstats_peak_mib;
