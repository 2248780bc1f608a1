-- Backfill in batches while both releases run; nothing changes shape.
UPDATE users SET full_name = name WHERE full_name IS NULL AND id < 100000;
CREATE INDEX CONCURRENTLY users_full_name ON users (full_name);
