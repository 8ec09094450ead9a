-- The store's jobs keep their primary key alone. The three secondary indexes
-- served queries that migadvisor runs on its SQLite histories only (a
-- collect's unsettled jobs, an array's tasks, queue waits by GPU type); in
-- the store they cost every collect's writes and answered nothing.
-- Dashboards add the indexes their own queries need.

-- +goose Up
ALTER TABLE jobs DROP INDEX jobs_by_array_job, DROP INDEX jobs_unsettled, DROP INDEX jobs_by_gpu_type;

-- +goose Down
ALTER TABLE jobs ADD INDEX jobs_by_array_job (cluster, array_job), ADD INDEX jobs_by_gpu_type (gpu_type, submit),
	ADD INDEX jobs_unsettled (unsettled, cluster, user);
