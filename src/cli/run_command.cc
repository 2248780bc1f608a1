#include <CLI/CLI.hpp>

#include "base/error.h"
#include "cli/command.h"

namespace zerodrop::cli {

// Placeholder until the run component lands; replaced by its owner.
Runner setup_run(CLI::App& app) {
  app.allow_extras();
  return [] () -> int { throw Error("'zerodrop run' is not built yet"); };
}

}  // namespace zerodrop::cli
