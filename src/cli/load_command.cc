#include <CLI/CLI.hpp>

#include "base/error.h"
#include "cli/command.h"

namespace zerodrop::cli {

// Placeholder until the load component lands; replaced by its owner.
Runner setup_load(CLI::App& app) {
  app.allow_extras();
  return [] () -> int { throw Error("'zerodrop load' is not built yet"); };
}

}  // namespace zerodrop::cli
