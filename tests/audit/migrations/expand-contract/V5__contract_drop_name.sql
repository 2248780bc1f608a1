-- Contract, one release later: no running release reads "name" any more (release 3 stopped).
-- zerodrop:ignore sql-drop-column  (release 3 is everywhere before this runs)
ALTER TABLE users DROP COLUMN name;
