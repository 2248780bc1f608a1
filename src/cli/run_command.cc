#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/duration.h"
#include "base/error.h"
#include "base/parse.h"
#include "base/subprocess.h"
#include "cli/command.h"
#include "shim/ready_server.h"
#include "shim/run.h"

namespace zerodrop::cli {
namespace run_command {
namespace {

struct RunFlags {
  std::string delay = "10s";
  std::string drain_timeout = "20s";
  std::string stop_signal = "TERM";
  std::string ready_port;
  std::string app_ready;
  std::string listen;
  std::string to;
  std::string h2_goaway_delay = "1s";
  std::vector<std::string> command;
};

constexpr const char* kRunFooter = R"(
Usage: zerodrop run [OPTIONS] -- APP [ARGS...]

Timeline after SIGTERM (or SIGINT): readiness fails at once; the app keeps serving for --delay
while the routers drop the pod; then the app gets --stop-signal; at --drain-timeout (from the
signal) its process group gets SIGKILL. Other signals (HUP, QUIT, USR1, USR2, WINCH, ...) go to the
app's process group at once. Zombies are reaped. The exit status is the app's (128+N if signal N
ended it). With --listen/--to, a front proxy closes keep-alive connections from the signal on:
HTTP/1.1 responses carry `Connection: close`; an HTTP/2 connection (h2c prior knowledge, gRPC,
told apart by its preface on the same port) gets GOAWAY(2^31-1), then --h2-goaway-delay later
the final GOAWAY, and closes once its streams are answered.

Examples:
  zerodrop run --delay 10s --ready-port 8081 -- ./server --port 8080
  zerodrop run --ready-port 8081 --app-ready http://127.0.0.1:8080/ready -- ./server
  zerodrop run --listen :8080 --to 127.0.0.1:8081 -- ./server --port 8081
  In a Dockerfile: ENTRYPOINT ["/zerodrop", "run", "--delay", "10s", "--", "/app"])";

shim::RunOptions to_options(const RunFlags& flags, std::vector<std::string> command) {
  shim::RunOptions options;
  options.command = std::move(command);
  options.delay = parse_duration(flags.delay, "--delay");
  options.drain_timeout = parse_duration(flags.drain_timeout, "--drain-timeout");
  auto signal = signal_from_name(flags.stop_signal);
  if (!signal) {
    throw Error(fmt::format("--stop-signal: expected a signal like TERM or 15, got '{}'",
                            flags.stop_signal));
  }
  options.stop_signal = *signal;
  if (!flags.ready_port.empty()) {
    options.ready = parse_host_port(flags.ready_port, "--ready-port", "0.0.0.0");
  }
  if (!flags.app_ready.empty()) {
    options.app_ready = shim::parse_http_url(flags.app_ready, "--app-ready");
  }
  if (flags.listen.empty() != flags.to.empty()) {
    throw Error("--listen and --to go together (the front proxy needs both)");
  }
  if (!flags.listen.empty()) {
    options.listen = parse_host_port(flags.listen, "--listen", "0.0.0.0");
    options.upstream = parse_host_port(flags.to, "--to", "127.0.0.1");
  }
  options.h2_goaway_delay = parse_duration(flags.h2_goaway_delay, "--h2-goaway-delay");
  if (options.command.empty()) {
    throw Error("no app to run; usage: zerodrop run [options] -- APP ARGS...");
  }
  return options;
}

}  // namespace
}  // namespace run_command

Runner setup_run(CLI::App& app) {
  using namespace run_command;
  auto flags = std::make_shared<RunFlags>();
  app.add_option("--delay", flags->delay,
                 "keep the app serving this long after readiness fails (duration)")
      ->capture_default_str();
  app.add_option("--drain-timeout", flags->drain_timeout,
                 "SIGKILL the app this long after the signal (duration)")
      ->capture_default_str();
  app.add_option("--stop-signal", flags->stop_signal, "signal passed to the app after --delay")
      ->capture_default_str();
  app.add_option("--ready-port", flags->ready_port,
                 "serve readiness on [HOST:]PORT (0.0.0.0; /healthz is liveness); off if unset");
  app.add_option("--app-ready", flags->app_ready,
                 "the app's readiness URL, mirrored while serving (http://...)");
  app.add_option("--listen", flags->listen, "front proxy: listen on [HOST]:PORT (0.0.0.0)");
  app.add_option("--to", flags->to, "front proxy: the app's HOST:PORT (127.0.0.1)");
  app.add_option("--h2-goaway-delay", flags->h2_goaway_delay,
                 "front proxy, HTTP/2: from the first GOAWAY to the final one (duration)")
      ->capture_default_str();
  app.add_option("command", flags->command, "APP ARGS... (after --)");
  app.footer(kRunFooter);
  return [flags]() -> int {
    return shim::run(to_options(*flags, flags->command));
  };
}

}  // namespace zerodrop::cli
