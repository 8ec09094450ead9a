-- The hash of the script's bytes a pending submission was made with
-- (history schema 15): collect checks it against the script slurmdbd
-- stored for the job it links the submission to.

-- +goose Up
ALTER TABLE pending_submissions ADD COLUMN script_hash VARCHAR(64) NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE pending_submissions DROP COLUMN script_hash;
