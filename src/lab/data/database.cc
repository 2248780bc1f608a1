#include "lab/data/database.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "base/error.h"
#include "base/listen.h"
#include "lab/data/migration.h"

namespace zerodrop::lab {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kUser = "zerodrop";      // the superuser initdb creates
constexpr const char* kDatabase = "postgres";  // the database initdb creates
constexpr Duration kStartTimeout = 30s;        // initdb plus start on a loaded machine
constexpr Duration kStopTimeout = 5s;          // fast shutdown, then SIGKILL

// postgres and initdb refuse to run as root: as root, both run as `nobody` through setpriv
// (util-linux) and the folders they write are handed to it. Empty: run as we are.
std::vector<std::string> run_as_prefix(const std::string& run_dir, const std::string& pg_dir) {
  if (::geteuid() != 0) {
    return {};
  }
  const passwd* nobody = ::getpwnam("nobody");
  if (nobody == nullptr) {
    throw Error("--db postgres: running as root, and there is no user 'nobody' to run it as");
  }
  // `nobody` must reach DIR/postgres: through the folders above the run folder (left as they
  // are), and the run folder itself (mkdtemp makes it 0700).
  fs::path run = fs::absolute(run_dir);
  for (fs::path up = run.parent_path(); !up.empty() && up != up.root_path();
       up = up.parent_path()) {
    if ((fs::status(up).permissions() & fs::perms::others_exec) == fs::perms::none) {
      throw Error(
          fmt::format("--db postgres: postgres runs as nobody (it refuses root), and {} "
                      "lets no other user through: give --out a folder under one that "
                      "does (e.g. /tmp)",
                      up.string()));
    }
  }
  fs::permissions(run_dir, fs::perms::others_exec, fs::perm_options::add);
  if (::chown(pg_dir.c_str(), nobody->pw_uid, nobody->pw_gid) != 0) {
    throw Error(fmt::format("--db postgres: cannot hand {} to nobody", pg_dir));
  }
  return {"setpriv", fmt::format("--reuid={}", nobody->pw_uid),
          fmt::format("--regid={}", nobody->pw_gid), "--clear-groups", "--"};
}

std::vector<std::string> with_prefix(std::vector<std::string> prefix,
                                     const std::vector<std::string>& argv) {
  prefix.insert(prefix.end(), argv.begin(), argv.end());
  return prefix;
}

// Runs initdb to completion: trust authentication on loopback only, C locale (English error
// messages), no fsync (a run's data is thrown away).
void init_cluster(const std::vector<std::string>& as, const std::string& data,
                  const std::string& log) {
  Subprocess initdb = Subprocess::spawn(
      {with_prefix(as, {fmt::format("{}/initdb", kPostgresBin), "-D", data, "-U", kUser, "-A",
                        "trust", "-E", "UTF8", "--locale=C", "--no-sync"}),
       {},
       log,
       log});
  ExitStatus status = initdb.wait();
  if (!status.success()) {
    throw Error(fmt::format("--db postgres: initdb {}: {} (log {})", status.describe(),
                            last_line(log), log));
  }
}

// postmaster.pid's 8th line is the postmaster's state: "ready" once it accepts connections.
bool accepting(const std::string& data) {
  std::ifstream in(data + "/postmaster.pid");
  std::string line;
  for (int i = 0; i < 8 && std::getline(in, line); ++i) {
  }
  return line.rfind("ready", 0) == 0;
}

void wait_accepting(Subprocess& server, const std::string& data, const std::string& log) {
  auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (!accepting(data)) {
    if (std::optional<ExitStatus> status = server.try_wait()) {
      throw Error(fmt::format("--db postgres: postgres {}: {} (log {})", status->describe(),
                              last_line(log), log));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      throw Error(
          fmt::format("--db postgres: postgres did not accept connections within {} "
                      "(log {})",
                      format_duration(kStartTimeout), log));
    }
    std::this_thread::sleep_for(20ms);
  }
}

}  // namespace

Database::Database(Subprocess server, std::vector<std::pair<std::string, std::string>> env,
                   std::string description)
    : server_(std::move(server)), env_(std::move(env)), description_(std::move(description)) {}

std::unique_ptr<Database> Database::start_postgres(const std::string& run_dir,
                                                   Isolation isolation) {
  for (const char* binary : {"initdb", "postgres"}) {
    if (::access(fmt::format("{}/{}", kPostgresBin, binary).c_str(), X_OK) != 0) {
      throw Error(fmt::format("--db postgres: {}/{} not found: install Debian's postgresql-15",
                              kPostgresBin, binary));
    }
  }
  std::string dir = run_dir + "/postgres";
  std::string data = dir + "/data";
  std::string log = dir + "/postgres.log";
  fs::create_directories(dir);
  std::vector<std::string> as = run_as_prefix(run_dir, dir);
  init_cluster(as, data, dir + "/initdb.log");

  // Loopback only (-h), the socket in the run folder (-k), error messages in English.
  std::string host = "127.0.0.1";
  uint16_t port = pick_free_port();
  Subprocess server = Subprocess::spawn(
      {with_prefix(as, {fmt::format("{}/postgres", kPostgresBin), "-D", data, "-h", host, "-p",
                        std::to_string(port), "-k", dir, "-c", "lc_messages=C", "-c", "fsync=off",
                        "-c", "max_connections=200"}),
       {},
       log,
       log,
       isolation});
  wait_accepting(server, data, log);
  std::string description = fmt::format(
      "postgres 15 accepts connections on {}:{} (pid {}, data {})", host, port, server.pid(), data);
  std::string port_text = std::to_string(port);
  return std::unique_ptr<Database>(new Database(
      std::move(server),
      {{"DATABASE_URL", fmt::format("postgresql://{}@{}:{}/{}", kUser, host, port, kDatabase)},
       {"PGHOST", host},
       {"PGPORT", port_text},
       {"PGUSER", kUser},
       {"PGDATABASE", kDatabase}},
      std::move(description)));
}

Database::~Database() {
  // SIGINT is postgres's fast shutdown: it ends its sessions and removes its shared memory.
  server_.send_signal(SIGINT);
  auto deadline = std::chrono::steady_clock::now() + kStopTimeout;
  while (!server_.try_wait() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  // Subprocess's destructor SIGKILLs what still runs.
}

}  // namespace zerodrop::lab
