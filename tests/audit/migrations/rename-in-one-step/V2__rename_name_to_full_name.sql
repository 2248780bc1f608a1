-- Release 2 renames the column in one step: release 1, still serving during the rollout,
-- selects and inserts "name" and fails until its last pod is gone.
ALTER TABLE users RENAME COLUMN name TO full_name;
