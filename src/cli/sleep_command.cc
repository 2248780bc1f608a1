#include <string>

#include <CLI/CLI.hpp>

#include "base/duration.h"
#include "cli/command.h"
#include "shim/sleep.h"

namespace zerodrop::cli {

Runner setup_sleep(CLI::App& app) {
  auto duration = std::make_shared<std::string>();
  app.add_option("DURATION", *duration, "how long: 10 (seconds), 1.5s, 300ms, 2m")->required();
  app.footer(R"(
Exits 0 when done; SIGTERM or SIGINT end it early with 128+N. Needs no shell and no /bin: the
release zerodrop is static (FROM scratch), and zerodrop-sleep is the same command alone.

Examples:
  zerodrop sleep 10
  In a pod spec (Kubernetes < 1.30, no native sleep action):
    lifecycle: {preStop: {exec: {command: ["/zerodrop", "sleep", "10"]}}})");
  return [duration]() -> int {
    return shim::sleep_for(parse_duration(*duration, "DURATION"));
  };
}

}  // namespace zerodrop::cli
