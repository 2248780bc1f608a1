#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/subprocess.h"

namespace zerodrop::lab {

class Recorder;

// When the lab runs the migration (--migrate-at): before the rollout, as a pre-upgrade hook
// (the rollout waits for it); when the first pod of the new revision is Ready; after the rollout.
enum class MigrateAt { before, between, after };

// --migrate-at's words, indexed by MigrateAt.
inline constexpr auto kMigrateAtNames =
    std::to_array<std::string_view>({"before", "between", "after"});
static_assert(kMigrateAtNames.size() == static_cast<size_t>(MigrateAt::after) + 1,
              "one name per MigrateAt");

constexpr std::string_view to_string(MigrateAt at) {
  return kMigrateAtNames[static_cast<size_t>(at)];
}

struct MigrationSpec {
  std::vector<std::string> command;  // run as given (no shell), with the pods' database env
  MigrateAt at = MigrateAt::before;
};

// One run of the migration command: started once, then polled by the control loop. Records
// migration_started (the command, and the SQL of a *.sql file it names) and migration_finished
// (exit status and the tail of its output, also in DIR/migration.log). Control thread only.
class Migration {
public:
  Migration(MigrationSpec spec, std::vector<std::pair<std::string, std::string>> env,
            std::string log_path, Recorder& recorder);

  MigrateAt at() const { return spec_.at; }

  bool started() const { return process_.has_value(); }

  // Spawns the command. Throws Error "--migrate: cannot run …" when it cannot be executed.
  void start();
  // True once the command has ended (its event recorded); false while it runs or before start.
  bool done();

  // "--migrate 'CMD' failed: exit code 1: <its last line>", once done() and it failed.
  std::optional<std::string> failure() const { return failure_; }

private:
  MigrationSpec spec_;
  std::vector<std::pair<std::string, std::string>> env_;
  std::string log_path_;
  Recorder& recorder_;
  std::optional<Subprocess> process_;
  bool finished_ = false;
  std::optional<std::string> failure_;
};

// The last non-empty line of a file (at most its last 4 KiB are read), "" when none.
std::string last_line(const std::string& path);

}  // namespace zerodrop::lab
