#pragma once

#include <functional>
#include <string_view>

namespace CLI {
class App;
}  // namespace CLI

namespace zerodrop::cli {

// What a subcommand runs once its flags are parsed; returns the process exit code (ExitCode).
using Runner = std::function<int()>;

// A subcommand: adds its flags to `app` (already named and described) and returns its Runner.
// Flag values are bound to locals captured by the Runner; the Runner maps them onto the
// component's Options and calls it. No logic lives in cli/.
struct Command {
  std::string_view name;
  std::string_view description;  // empty: hidden from --help (an internal subcommand)
  Runner (*setup)(CLI::App& app);
};

Runner setup_load(CLI::App& app);
Runner setup_lab(CLI::App& app);
Runner setup_report(CLI::App& app);
Runner setup_audit(CLI::App& app);
Runner setup_sim(CLI::App& app);
Runner setup_run(CLI::App& app);
Runner setup_sleep(CLI::App& app);
Runner setup_copy_self(CLI::App& app);
Runner setup_verify(CLI::App& app);
Runner setup_verify_agent(CLI::App& app);
Runner setup_watch(CLI::App& app);

}  // namespace zerodrop::cli
