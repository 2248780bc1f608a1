-- Expand, before the rollout to 2-dual: a nullable column nothing running reads yet.
ALTER TABLE items ADD COLUMN title text;
