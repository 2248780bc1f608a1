#include "audit/pre_stop.h"

namespace zerodrop::audit {
namespace {

using kube::is_shell;

std::string_view basename(std::string_view path) {
  return kube::program_name(path);
}

}  // namespace

std::optional<double> delay_seconds(const PreStopDelay& delay) {
  if (!delay.delay) {
    return std::nullopt;
  }
  return to_seconds(*delay.delay);
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
