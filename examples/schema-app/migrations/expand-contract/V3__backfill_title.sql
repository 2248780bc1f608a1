-- Backfill, once every pod runs 2-dual (nothing writes "name" alone any more); then roll to 2.
UPDATE items SET title = name WHERE title IS NULL;
