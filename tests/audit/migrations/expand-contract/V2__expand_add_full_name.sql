-- Expand: a nullable column; release 2 writes both "name" and "full_name".
ALTER TABLE users ADD COLUMN full_name text;
