#include <CLI/CLI.hpp>

#include "base/error.h"
#include "cli/command.h"

namespace zerodrop::cli {

// Placeholder until the lab component lands; replaced by its owner.
Runner setup_lab(CLI::App& app) {
  app.allow_extras();
  return [] () -> int { throw Error("'zerodrop lab' is not built yet"); };
}

}  // namespace zerodrop::cli
