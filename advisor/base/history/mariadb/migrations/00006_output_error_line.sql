-- The first line of a job's output that reads as an error, and its file
-- (history schema 16): what a script that fails on every profile says of
-- itself; and the settings the job ran with (MIGADVISOR_SETTING).

-- +goose Up
ALTER TABLE outputs ADD COLUMN error_file TEXT;
ALTER TABLE outputs ADD COLUMN error_line BIGINT;
ALTER TABLE outputs ADD COLUMN error_text TEXT;
ALTER TABLE outputs ADD COLUMN settings TEXT;

-- +goose Down
ALTER TABLE outputs DROP COLUMN settings;
ALTER TABLE outputs DROP COLUMN error_text;
ALTER TABLE outputs DROP COLUMN error_line;
ALTER TABLE outputs DROP COLUMN error_file;
