-- How long an account keeps its activity entries and run events (the daily
-- job removes older ones, oldest first, per account), and the index that
-- finds an account's oldest run events.
ALTER TABLE accounts ADD COLUMN activity_retention_days INTEGER NOT NULL DEFAULT 180;
CREATE INDEX IF NOT EXISTS run_events_account ON run_events (account_id, created_at, id);
