-- Contract, one release later: no running version reads or writes "name" (all run 2).
-- zerodrop:ignore sql-drop-column  (version 2 is everywhere before this runs)
ALTER TABLE items DROP COLUMN name;
