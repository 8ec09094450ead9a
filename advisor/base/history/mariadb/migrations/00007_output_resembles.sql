-- The reference benchmark a job's output resembles (history schema 18): the
-- workload of a job whose script the history does not hold, which its
-- runtime prior scales it like.

-- +goose Up
ALTER TABLE outputs ADD COLUMN resembles TEXT;

-- +goose Down
ALTER TABLE outputs DROP COLUMN resembles;
