// zerodrop: proves a rolling update drops zero requests, and names the hole when it does not.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/error.h"
#include "base/exit_code.h"
#include "base/text.h"
#include "base/version.h"
#include "cli/command.h"
#include "record/hole.h"

namespace zerodrop::cli {
namespace {

// One static table of subcommands, in the order --help lists them.
constexpr Command kCommands[] = {
    {"lab", "Roll out your real server on this machine, with Kubernetes' termination semantics",
     setup_lab},
    {"load", "Send HTTP/1.1, HTTP/2 or gRPC at a constant rate; record and classify each request",
     setup_load},
    {"report", "Re-render the diagnosis of a past run (lab, sim, verify, watch) from its folder",
     setup_report},
    {"audit", "Check Kubernetes manifests and SQL migrations for the holes that drop requests",
     setup_audit},
    {"sim", "Simulate a rollout on a cluster of any size; size preStop and grace for it",
     setup_sim},
    {"run", "A drain-aware PID 1: fail readiness at SIGTERM, wait, then stop the app", setup_run},
    {"verify", "Roll out a Deployment on a real cluster under load; name the hole if any drop",
     setup_verify},
    {"watch", "Measure every rollout of a cluster, always on: /metrics, Events, run folders",
     setup_watch},
    {"sleep", "Sleep N seconds: a preStop delay for distroless and scratch images", setup_sleep},
    {"copy-self", "Copy this static binary into a folder: zerodrop sleep for images without cp",
     setup_copy_self},
    {"verify-agent", "", setup_verify_agent},  // verify's load pods run it
};

// The holes come from record::kHoles, the one table every output shares.
std::string footer() {
  std::string text =
      "\nHoles zerodrop names (every report, audit rule and diagnosis uses these ids):\n";
  for (const record::HoleInfo& h : record::kHoles) {
    text += fmt::format("  {:<20} {}\n", h.id, h.meaning);
  }
  return text + R"(
Exit codes: 0 ok, 1 the check failed (requests dropped, findings), 2 usage or input error,
130 interrupted. Run 'zerodrop COMMAND --help' for a command's flags and examples.)";
}

void suggest_if_unknown(int argc, char** argv) {
  if (argc < 2) {
    std::string names;
    for (const Command& c : kCommands) {
      if (!c.description.empty()) {
        names += names.empty() ? c.name : fmt::format(", {}", c.name);
      }
    }
    throw Error(fmt::format("a command is needed ({}); see 'zerodrop --help'", names));
  }
  std::string_view word = argv[1];
  if (word.starts_with('-')) {
    if (word != "-h" && word != "--help" && word != "--version") {
      throw Error(fmt::format("unknown option '{}'; see 'zerodrop --help'", word));
    }
    return;
  }
  std::vector<std::string_view> names;
  for (const Command& c : kCommands) {
    if (c.name == word) {
      return;
    }
    names.push_back(c.name);
  }
  std::string hint = closest_match(word, names);
  throw Error(hint.empty() ? fmt::format("unknown command '{}'; see 'zerodrop --help'", word)
                           : fmt::format("unknown command '{}'; did you mean '{}'?", word, hint));
}

// CLI11 says "The following arguments were not expected: 1s -d"; name the first culprit, the
// command it was given to, and the flag it probably meant.
std::string unexpected_message(const CLI::App& app) {
  const CLI::App* sub = &app;
  for (const CLI::App* s : app.get_subcommands()) {
    sub = s;
  }
  std::string command = sub == &app ? "zerodrop" : "zerodrop " + sub->get_name();
  std::vector<std::string> extras = sub->remaining();
  auto culprit = std::find_if(extras.begin(), extras.end(),
                              [](const std::string& a) { return a.size() > 1 && a[0] == '-'; });
  if (culprit == extras.end()) {
    return fmt::format("unexpected argument '{}' for '{}'; see '{} --help'",
                       extras.empty() ? std::string() : extras.front(), command, command);
  }
  std::string_view word = *culprit;
  word = word.substr(0, word.find('='));
  std::vector<std::string> names;
  if (word.starts_with("--")) {  // a one-letter flag is too short to guess a typo from
    for (const CLI::Option* option : sub->get_options()) {
      for (const std::string& name : option->get_lnames()) {
        names.push_back("--" + name);
      }
    }
  }
  std::vector<std::string_view> views(names.begin(), names.end());
  std::string hint = closest_match(word, views);
  return hint.empty()
             ? fmt::format("unknown option '{}' for '{}'; see '{} --help'", word, command, command)
             : fmt::format("unknown option '{}' for '{}'; did you mean '{}'?", word, command, hint);
}

int run(int argc, char** argv) {
  CLI::App app{
      "zerodrop: prove a rolling update drops zero requests; name the hole when it does not."};
  // Installed as kubectl-zerodrop too: `kubectl zerodrop verify …` runs this same binary.
  std::string_view self = argv[0];
  self = self.substr(self.rfind('/') + 1);
  app.name(self == "kubectl-zerodrop" ? "kubectl zerodrop" : "zerodrop");
  app.footer(footer());
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("zerodrop {}", base::version()));
  app.get_formatter()->column_width(30);

  std::vector<std::pair<CLI::App*, Runner>> runners;
  for (const Command& c : kCommands) {
    CLI::App* sub = app.add_subcommand(std::string(c.name), std::string(c.description));
    if (c.description.empty()) {
      sub->group("");  // hidden from --help
    }
    runners.emplace_back(sub, c.setup(*sub));
  }
  suggest_if_unknown(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError&) {
    std::fprintf(stderr, "zerodrop: error: %s\n", unexpected_message(app).c_str());
    return to_int(ExitCode::usage);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "zerodrop: error: %s\n", e.what());
    return to_int(ExitCode::usage);
  }
  for (auto& [sub, runner] : runners) {
    if (sub->parsed()) {
      return runner();
    }
  }
  return to_int(ExitCode::usage);
}

}  // namespace
}  // namespace zerodrop::cli

// The single catch point: every user error ends here as one line and exit code 2.
int main(int argc, char** argv) {
  try {
    return zerodrop::cli::run(argc, argv);
  } catch (const zerodrop::Error& e) {
    std::fprintf(stderr, "zerodrop: error: %s\n", e.what());
    return zerodrop::to_int(zerodrop::ExitCode::usage);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zerodrop: error: %s\n", e.what());
    return zerodrop::to_int(zerodrop::ExitCode::usage);
  }
}
