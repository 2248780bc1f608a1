// schema-app: every GET / writes a row to `items` and reads the newest back, in one of the
// versions of a column rename (name -> title), chosen by --app-version:
//   1       writes and reads `name`                        (the schema of V1)
//   2       writes and reads `title`                       (after the rename, or the contract)
//   2-dual  writes both, reads `title` falling back to `name` (the expand/contract middle step)
// A query that fails answers 500 with the database's error as the body, and is logged. The
// connection comes from libpq's environment (PGHOST, PGPORT, PGUSER, PGDATABASE), as the lab's
// --db postgres sets it. At SIGTERM it drains like close-listener.
#include <cstdio>
#include <cstring>
#include <libpq-fe.h>
#include <memory>
#include <string>
#include <vector>

#include "naive/example_server.h"

namespace {

using zerodrop::examples::Reply;

struct Version {
  const char* name;
  const char* write;  // $1 is the value
  const char* read;
};

constexpr Version kVersions[] = {
    {"1", "INSERT INTO items (name) VALUES ($1)",
     "SELECT name FROM items ORDER BY id DESC LIMIT 1"},
    {"2", "INSERT INTO items (title) VALUES ($1)",
     "SELECT title FROM items ORDER BY id DESC LIMIT 1"},
    {"2-dual", "INSERT INTO items (name, title) VALUES ($1, $1)",
     "SELECT COALESCE(title, name) FROM items ORDER BY id DESC LIMIT 1"},
};

// The schema of V1, made once by whichever pod comes first (the advisory lock keeps pods that
// start together from racing on CREATE TABLE).
constexpr const char* kSchema =
    "SELECT pg_advisory_lock(14); "
    "CREATE TABLE IF NOT EXISTS items (id bigserial PRIMARY KEY, name text); "
    "SELECT pg_advisory_unlock(14);";

using Connection = std::unique_ptr<PGconn, decltype(&PQfinish)>;
using Result = std::unique_ptr<PGresult, decltype(&PQclear)>;

// The first line of libpq's error text: `ERROR:  column "name" does not exist`.
std::string first_line(const char* text) {
  std::string line = text != nullptr ? text : "";
  return line.substr(0, line.find('\n'));
}

class Store {
public:
  Store(const Version& version, std::string pod) : version_(version), pod_(std::move(pod)) {}

  // Connects and makes the schema; false with the reason on stderr.
  bool open() {
    conn_.reset(PQconnectdb(""));
    if (PQstatus(conn_.get()) != CONNECTION_OK) {
      std::fprintf(stderr, "schema-app: cannot connect: %s\n", PQerrorMessage(conn_.get()));
      return false;
    }
    Result r(PQexec(conn_.get(), kSchema), PQclear);
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
      std::fprintf(stderr, "schema-app: cannot make the schema: %s\n", PQerrorMessage(conn_.get()));
      return false;
    }
    return true;
  }

  Reply handle() {
    if (PQstatus(conn_.get()) != CONNECTION_OK) {
      PQreset(conn_.get());
    }
    const char* value = pod_.c_str();
    Result w(PQexecParams(conn_.get(), version_.write, 1, nullptr, &value, nullptr, nullptr, 0),
             PQclear);
    if (PQresultStatus(w.get()) != PGRES_COMMAND_OK) {
      return failed("insert");
    }
    Result r(PQexec(conn_.get(), version_.read), PQclear);
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
      return failed("select");
    }
    std::string newest = PQntuples(r.get()) > 0 ? PQgetvalue(r.get(), 0, 0) : "";
    return {200, "ok " + newest + "\n"};
  }

private:
  Reply failed(const char* what) {
    std::string error = first_line(PQerrorMessage(conn_.get()));
    std::fprintf(stderr, "schema-app %s: %s failed: %s\n", version_.name, what, error.c_str());
    return {500, error + "\n"};
  }

  const Version& version_;
  std::string pod_;
  Connection conn_{nullptr, PQfinish};
};

const Version* find_version(const std::string& name) {
  for (const Version& v : kVersions) {
    if (name == v.name) {
      return &v;
    }
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  // --app-version is this app's; every other flag is the example servers' own.
  std::string version = "1";
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--app-version") == 0 && i + 1 < argc) {
      version = argv[++i];
    } else {
      rest.push_back(argv[i]);
    }
  }
  const Version* v = find_version(version);
  if (v == nullptr) {
    std::fprintf(stderr, "schema-app: error: --app-version: expected 1, 2 or 2-dual, got '%s'\n",
                 version.c_str());
    return 2;
  }
  const char* pod = std::getenv("POD_NAME");
  Store store(*v, pod != nullptr ? pod : "local");
  if (!store.open()) {
    return 1;
  }
  zerodrop::examples::ServerOptions o;
  o.on_sigterm = zerodrop::examples::OnSigterm::drain;
  o.handler = [&store] {
    return store.handle();
  };
  return zerodrop::examples::server_main(static_cast<int>(rest.size()), rest.data(), o);
}
