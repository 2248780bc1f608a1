-- One step: version 1 (still running during the rollout) reads and writes "name".
ALTER TABLE items RENAME COLUMN name TO title;
