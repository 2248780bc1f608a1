#include <CLI/CLI.hpp>

#include "base/error.h"
#include "cli/command.h"

namespace zerodrop::cli {

// Placeholder until the audit component lands; replaced by its owner.
Runner setup_audit(CLI::App& app) {
  app.allow_extras();
  return [] () -> int { throw Error("'zerodrop audit' is not built yet"); };
}

}  // namespace zerodrop::cli
