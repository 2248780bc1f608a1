#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/duration.h"
#include "base/subprocess.h"

namespace zerodrop::lab {

// The database a run's pods share (--db).
enum class DatabaseKind { none, postgres };

// A PostgreSQL 15 server of one run (Debian's postgresql-15): initdb into DIR/postgres/data,
// listening on 127.0.0.1 and a free port only, its unix socket in DIR/postgres. As root it runs
// as `nobody` (postgres refuses root). It cannot outlive the lab: a base::Subprocess, whose keeper
// kills it when the lab dies, even of SIGKILL; the destructor stops it (fast shutdown).
class Database {
public:
  // Starts it and waits until it accepts connections. Throws Error naming what failed (the
  // binaries missing, initdb's or postgres's own last words).
  static std::unique_ptr<Database> start_postgres(const std::string& run_dir, Isolation isolation);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // DATABASE_URL and libpq's PGHOST, PGPORT, PGUSER, PGDATABASE: what every pod and the
  // migration get.
  const std::vector<std::pair<std::string, std::string>>& env() const { return env_; }

  // "postgres 15 accepts connections on 127.0.0.1:PORT (pid N, data DIR)": for the record.
  const std::string& describe() const { return description_; }

private:
  Database(Subprocess server, std::vector<std::pair<std::string, std::string>> env,
           std::string description);

  Subprocess server_;
  std::vector<std::pair<std::string, std::string>> env_;
  std::string description_;
};

// Where Debian installs PostgreSQL 15's server binaries.
inline constexpr const char* kPostgresBin = "/usr/lib/postgresql/15/bin";

}  // namespace zerodrop::lab
