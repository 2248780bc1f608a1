#include "cli/manifest_flags.h"

#include <CLI/CLI.hpp>

#include "base/error.h"
#include "base/int_or_percent.h"
#include "kube/rollout.h"

namespace zerodrop::cli {

bool flag_given(const CLI::App& app, const char* flag) {
  return app.count(flag) > 0;
}

void apply_rollout_limit_flags(const CLI::App& app, const std::string& max_surge,
                               const std::string& max_unavailable, IntOrPercent& surge,
                               IntOrPercent& unavailable) {
  if (flag_given(app, "--max-surge")) {
    surge = IntOrPercent::parse(max_surge, "--max-surge");
  }
  if (flag_given(app, "--max-unavailable")) {
    unavailable = IntOrPercent::parse(max_unavailable, "--max-unavailable");
  }
  if (auto why = kube::invalid_limits(surge, unavailable)) {
    throw Error("--max-surge, --max-unavailable: " + *why);
  }
}

}  // namespace zerodrop::cli
