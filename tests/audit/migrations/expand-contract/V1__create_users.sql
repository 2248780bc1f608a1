CREATE TABLE users (
  id bigserial PRIMARY KEY,
  name text NOT NULL
);
CREATE INDEX users_name ON users (name);
