-- Release 3 reads "full_name"; every running release writes it: enforce without a long lock.
ALTER TABLE users ADD CONSTRAINT users_full_name_present CHECK (full_name IS NOT NULL) NOT VALID;
ALTER TABLE users VALIDATE CONSTRAINT users_full_name_present;
