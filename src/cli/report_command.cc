#include <CLI/CLI.hpp>

#include "base/error.h"
#include "cli/command.h"

namespace zerodrop::cli {

// Placeholder until the report component lands; replaced by its owner.
Runner setup_report(CLI::App& app) {
  app.allow_extras();
  return [] () -> int { throw Error("'zerodrop report' is not built yet"); };
}

}  // namespace zerodrop::cli
