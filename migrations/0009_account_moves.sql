-- An account being moved to another database (npm run admin -- move-account):
-- the name of the database it moves to, set on its row in the database it
-- leaves, so writes through any stale route are refused until it has moved.
ALTER TABLE accounts ADD COLUMN moving_to TEXT;
