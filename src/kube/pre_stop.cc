#include "kube/pre_stop.h"

#include <charconv>
#include <regex>

#include <fmt/format.h>

namespace zerodrop::kube {
namespace {

// GNU sleep's argument: "5", "2.5", "5s", "1m", "1h", "1d"; nullopt for anything else.
std::optional<Duration> sleep_argument(std::string_view arg) {
  double scale = 1;
  if (!arg.empty()) {
    switch (arg.back()) {
      case 's':
        scale = 1;
        break;
      case 'm':
        scale = 60;
        break;
      case 'h':
        scale = 3600;
        break;
      case 'd':
        scale = 86400;
        break;
      default:
        scale = 0;
    }
    if (scale != 0) {
      arg.remove_suffix(1);
    } else {
      scale = 1;
    }
  }
  double value = 0;
  auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), value);
  if (arg.empty() || ec != std::errc() || end != arg.data() + arg.size() || value < 0) {
    return std::nullopt;
  }
  return from_seconds(value * scale);
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

std::optional<Duration> sleep_in_script(const std::string& script) {
  static const std::regex kSleep(R"((^|[\s;&|(])sleep\s+([0-9.]+[smhd]?)(\s|;|&|\||\)|$))");
  std::smatch match;
  if (!std::regex_search(script, match, kSleep)) {
    return std::nullopt;
  }
  return sleep_argument(match[2].str());
}

PreStopDelay exec_delay(const std::vector<std::string>& argv) {
  if (argv.size() >= 2 && program_name(argv[0]) == "sleep") {
    return {sleep_argument(argv[1]), fmt::format("exec {} {}", argv[0], argv[1])};
  }
  if (argv.size() >= 3 && program_name(argv[0]) == "zerodrop" && argv[1] == "sleep") {
    return {sleep_argument(argv[2]), fmt::format("exec zerodrop sleep {}", argv[2])};
  }
  if (auto script = shell_script(argv)) {
    return {sleep_in_script(*script), fmt::format("exec {} -c '{}'", argv[0], *script)};
  }
  return {std::nullopt, fmt::format("exec {}", fmt::join(argv, " "))};
}

}  // namespace

std::string_view program_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool is_shell(std::string_view program) {
  std::string_view name = program_name(program);
  return name == "sh" || name == "bash" || name == "ash" || name == "dash" || name == "zsh";
}

PreStopDelay pre_stop_delay(const Handler& hook) {
  switch (hook.kind) {
    case HandlerKind::sleep:
      return {std::chrono::seconds(hook.sleep_seconds),
              fmt::format("native sleep {}s", hook.sleep_seconds)};
    case HandlerKind::exec:
      return exec_delay(hook.command);
    case HandlerKind::http_get:
      return {std::nullopt, fmt::format("httpGet {}", hook.path.empty() ? "/" : hook.path)};
    default:
      return {std::nullopt, std::string(to_string(hook.kind))};
  }
}

}  // namespace zerodrop::kube
