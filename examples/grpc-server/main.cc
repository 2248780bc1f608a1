// grpc-server: a gRPC server on Debian's grpc++ (gRPC's C core), the C++ counterpart of
// tests/testing/grpc_server.py. It serves zd.Echo/Call through a CallbackGenericService (no
// protoc step: the request message is echoed as bytes), names itself in the `x-pod-name` initial
// metadata and answers grpc.health.v1.Health/Check through grpc++'s default health service.
// What it does at SIGTERM is the point of it:
//   --on-term graceful  health NOT_SERVING, serve --delay more, then Shutdown(now + --drain):
//                       GOAWAY twice, in-flight RPCs finish (those past the deadline cancelled)
//   --on-term now       after --delay, Shutdown(now): every RPC in flight cancelled
//   --on-term exit      after --delay, _exit(0): no GOAWAY, the kernel closes the connections
#include <grpcpp/alarm.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "base/duration.h"
#include "base/error.h"
#include "base/parse.h"

namespace {

using zerodrop::Duration;

enum class OnTerm { graceful, now, exit };

struct Flags {
  std::string host = "127.0.0.1";
  std::string port = "50051";
  std::string name;
  std::string on_term = "graceful";
  std::string delay = "0s";
  std::string drain = "5s";
  std::string max_connection_age;  // empty: connections are never recycled
  std::string rpc_time = "0s";
};

std::chrono::system_clock::time_point after(Duration d) {
  return std::chrono::system_clock::now()
         + std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
}

// One zd.Echo/Call: reads the request message, waits --rpc-time on a grpc::Alarm (no thread held)
// and answers it back. Any other method is UNIMPLEMENTED. Deletes itself when gRPC is done.
class EchoCall final : public grpc::ServerGenericBidiReactor {
public:
  EchoCall(grpc::GenericCallbackServerContext* context, const std::string& pod, Duration rpc_time)
      : rpc_time_(rpc_time) {
    if (context->method() != "/zd.Echo/Call") {
      Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "unknown method " + context->method()));
      return;
    }
    context->AddInitialMetadata("x-pod-name", pod);
    StartRead(&message_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::INTERNAL, "no request message"));
      return;
    }
    if (rpc_time_ <= Duration::zero()) {
      answer();
      return;
    }
    // The alarm fires (ok or cancelled by a shutdown) before Finish, so before OnDone deletes it.
    alarm_.Set(after(rpc_time_), [this](bool) { answer(); });
  }

  void OnDone() override { delete this; }

private:
  void answer() { StartWriteAndFinish(&message_, grpc::WriteOptions(), grpc::Status::OK); }

  Duration rpc_time_;
  grpc::ByteBuffer message_;
  grpc::Alarm alarm_;
};

class EchoService final : public grpc::CallbackGenericService {
public:
  EchoService(std::string pod, Duration rpc_time) : pod_(std::move(pod)), rpc_time_(rpc_time) {}

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    return new EchoCall(context, pod_, rpc_time_);
  }

private:
  std::string pod_;
  Duration rpc_time_;
};

OnTerm parse_on_term(const std::string& text) {
  if (text == "graceful") {
    return OnTerm::graceful;
  }
  if (text == "now") {
    return OnTerm::now;
  }
  if (text == "exit") {
    return OnTerm::exit;
  }
  throw zerodrop::Error("--on-term: expected graceful, now or exit, got '" + text + "'");
}

int wait_for_stop_signal(const sigset_t& signals) {
  int signal = 0;
  sigwait(&signals, &signal);
  return signal;
}

// Builds and starts the server on host:port; the port it got is written to `bound`.
std::unique_ptr<grpc::Server> start(const Flags& flags, EchoService& echo, int& bound) {
  auto port = zerodrop::parse_integer(flags.port, "--port", 0, 65535);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(flags.host + ":" + std::to_string(port),
                           grpc::InsecureServerCredentials(), &bound);
  if (!flags.max_connection_age.empty()) {
    Duration age = zerodrop::parse_duration(flags.max_connection_age, "--max-connection-age");
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_AGE_MS,
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(age).count()));
  }
  builder.RegisterCallbackGenericService(&echo);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || bound == 0) {
    throw zerodrop::Error("cannot listen on " + flags.host + ":" + flags.port);
  }
  server->GetHealthCheckService()->SetServingStatus("zd.Echo", true);
  return server;
}

int serve(const Flags& flags) {
  OnTerm on_term = parse_on_term(flags.on_term);
  Duration delay = zerodrop::parse_duration(flags.delay, "--delay");
  Duration drain = zerodrop::parse_duration(flags.drain, "--drain");
  Duration rpc_time = zerodrop::parse_duration(flags.rpc_time, "--rpc-time");
  // Blocked before gRPC starts its threads, so that only sigwait below takes them. The no-op
  // handlers make the disposition "caught", as it is: PID 1 of a PID namespace (a container, the
  // lab's pods) must not look like a process the kernel drops SIGTERM for.
  std::signal(SIGTERM, [](int) {});
  std::signal(SIGINT, [](int) {});
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const char* pod = std::getenv("POD_NAME");
  std::string name = !flags.name.empty() ? flags.name : pod != nullptr ? pod : "grpc-server";
  EchoService echo(name, rpc_time);
  int bound = 0;
  std::unique_ptr<grpc::Server> server = start(flags, echo, bound);
  std::printf("listening on %s:%d\n", flags.host.c_str(), bound);
  std::fflush(stdout);

  // Stop: fail health -> serve --delay more -> the mode's ending.
  int signal = wait_for_stop_signal(signals);
  server->GetHealthCheckService()->SetServingStatus(false);
  std::printf("%s: %s, delay %s\n", strsignal(signal), flags.on_term.c_str(),
              zerodrop::format_duration(delay).c_str());
  std::fflush(stdout);
  std::this_thread::sleep_for(delay);
  if (on_term == OnTerm::exit) {
    _exit(0);
  }
  server->Shutdown(after(on_term == OnTerm::graceful ? drain : Duration::zero()));
  server->Wait();
  std::printf("stopped\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"grpc-server: a gRPC echo server with a chosen shutdown (zerodrop example)"};
  Flags flags;
  cli.add_option("--host", flags.host, "address to listen on")->capture_default_str();
  cli.add_option("--port", flags.port, "port to listen on, 0 = any")->capture_default_str();
  cli.add_option("--name", flags.name, "x-pod-name (default: $POD_NAME)");
  cli.add_option("--on-term", flags.on_term, "at SIGTERM: graceful, now or exit")
      ->capture_default_str();
  cli.add_option("--delay", flags.delay, "serve this long after SIGTERM (health NOT_SERVING)")
      ->capture_default_str();
  cli.add_option("--drain", flags.drain, "graceful: Shutdown(now + DRAIN)")->capture_default_str();
  cli.add_option("--max-connection-age", flags.max_connection_age,
                 "GOAWAY each connection after this long (GRPC_ARG_MAX_CONNECTION_AGE_MS)");
  cli.add_option("--rpc-time", flags.rpc_time, "each Call takes this long")->capture_default_str();
  cli.footer(
      "\nServes zd.Echo/Call (echoes the message) and grpc.health.v1.Health/Check.\n"
      "Example: grpc-server --port 50051 --on-term graceful --delay 5s --drain 10s");
  CLI11_PARSE(cli, argc, argv);
  try {
    return serve(flags);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "grpc-server: error: %s\n", e.what());
    return 2;
  }
}
