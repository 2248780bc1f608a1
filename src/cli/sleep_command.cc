#include <CLI/CLI.hpp>

#include "base/error.h"
#include "cli/command.h"

namespace zerodrop::cli {

// Placeholder until the sleep component lands; replaced by its owner.
Runner setup_sleep(CLI::App& app) {
  app.allow_extras();
  return [] () -> int { throw Error("'zerodrop sleep' is not built yet"); };
}

}  // namespace zerodrop::cli
