#include <CLI/CLI.hpp>

#include "base/error.h"
#include "cli/command.h"

namespace zerodrop::cli {

// Placeholder until the sim component lands; replaced by its owner.
Runner setup_sim(CLI::App& app) {
  app.allow_extras();
  return [] () -> int { throw Error("'zerodrop sim' is not built yet"); };
}

}  // namespace zerodrop::cli
