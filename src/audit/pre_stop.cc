#include "audit/pre_stop.h"

#include <charconv>
#include <regex>

#include <fmt/format.h>

namespace zerodrop::audit {
namespace {

std::string_view basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool is_shell(std::string_view program) {
  std::string_view name = basename(program);
  return name == "sh" || name == "bash" || name == "ash" || name == "dash" || name == "zsh";
}

// GNU sleep's argument: "5", "2.5", "5s", "1m"; nullopt for anything else.
std::optional<double> sleep_seconds(std::string_view arg) {
  double scale = 1;
  if (!arg.empty() && (arg.back() == 's' || arg.back() == 'm')) {
    scale = arg.back() == 'm' ? 60 : 1;
    arg.remove_suffix(1);
  }
  double value = 0;
  auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), value);
  if (arg.empty() || ec != std::errc() || end != arg.data() + arg.size() || value < 0) {
    return std::nullopt;
  }
  return value * scale;
}

// The script of `sh -c SCRIPT`, if that is what the command is.
std::optional<std::string> shell_script(const std::vector<std::string>& argv) {
  if (argv.empty() || !is_shell(argv[0])) {
    return std::nullopt;
  }
  for (size_t i = 1; i + 1 < argv.size(); ++i) {
    if (argv[i] == "-c" || argv[i] == "-ec" || argv[i] == "-ce") {
      return argv[i + 1];
    }
  }
  return std::nullopt;
}

std::optional<double> sleep_in_script(const std::string& script) {
  static const std::regex kSleep(R"((^|[\s;&|(])sleep\s+([0-9.]+[sm]?)(\s|;|&|\||\)|$))");
  std::smatch match;
  if (!std::regex_search(script, match, kSleep)) {
    return std::nullopt;
  }
  return sleep_seconds(match[2].str());
}

PreStopDelay exec_delay(const std::vector<std::string>& argv) {
  std::string shown = argv.empty() ? "" : argv[0];
  if (argv.size() >= 2 && basename(argv[0]) == "sleep") {
    return {sleep_seconds(argv[1]), fmt::format("exec {} {}", argv[0], argv[1])};
  }
  if (argv.size() >= 3 && basename(argv[0]) == "zerodrop" && argv[1] == "sleep") {
    return {sleep_seconds(argv[2]), fmt::format("exec zerodrop sleep {}", argv[2])};
  }
  if (auto script = shell_script(argv)) {
    return {sleep_in_script(*script), fmt::format("exec {} -c '{}'", argv[0], *script)};
  }
  return {std::nullopt, fmt::format("exec {}", fmt::join(argv, " "))};
}

}  // namespace

PreStopDelay pre_stop_delay(const kube::Handler& hook) {
  switch (hook.kind) {
    case kube::HandlerKind::sleep:
      return {static_cast<double>(hook.sleep_seconds),
              fmt::format("native sleep {}s", hook.sleep_seconds)};
    case kube::HandlerKind::exec:
      return exec_delay(hook.command);
    case kube::HandlerKind::http_get:
      return {std::nullopt, fmt::format("httpGet {}", hook.path.empty() ? "/" : hook.path)};
    default:
      return {std::nullopt, std::string(kube::to_string(hook.kind))};
  }
}

std::optional<std::string> shell_less_image(std::string_view image) {
  // Debug variants carry a busybox shell on purpose.
  bool debug = image.find(":debug") != std::string_view::npos
               || image.find("-debug") != std::string_view::npos;
  if (debug) {
    return std::nullopt;
  }
  if (image.find("/distroless/") != std::string_view::npos
      || image.find("distroless") != std::string_view::npos) {
    return "distroless images ship no shell and no sleep";
  }
  if (image.find("chiseled") != std::string_view::npos) {
    return "Ubuntu chiseled images ship no shell and no sleep";
  }
  if (image.starts_with("cgr.dev/chainguard/") && image.find("-dev") == std::string_view::npos) {
    return "Chainguard images (other than -dev) ship no shell and no sleep";
  }
  return std::nullopt;
}

std::optional<std::string> needed_program(const kube::Handler& hook) {
  if (hook.kind != kube::HandlerKind::exec || hook.command.empty()) {
    return std::nullopt;
  }
  const std::string& program = hook.command[0];
  if (is_shell(program)) {
    return program;
  }
  if (basename(program) == "sleep") {
    return program;
  }
  return std::nullopt;
}

bool runs_zerodrop(const kube::Container& container) {
  std::vector<std::string> argv = container.command;
  argv.insert(argv.end(), container.args.begin(), container.args.end());
  return argv.size() >= 2 && basename(argv[0]) == "zerodrop" && argv[1] == "run";
}

}  // namespace zerodrop::audit
