// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
// One router alone in front of a fixed backend (the hidden --router-only mode of the benchmarks),
// and the free ports the lab hands out.
#include <stdlib.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <boost/asio.hpp>
#include <fmt/format.h>

#include "base/error.h"
#include "base/parse.h"
#include "lab/lab.h"

namespace zerodrop::lab {

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

std::string temp_dir() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

}  // namespace

void run_router_only(Dataplane dataplane, Ingress ingress, const std::string& listen,
                     const std::string& backend) {
  RouterOptions r;
  r.dataplane = dataplane;
  r.ingress = ingress;
  std::string dir;
  if (ingress != Ingress::none) {
    std::string pattern = temp_dir() + "/zerodrop-router-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw Error(fmt::format("cannot create a folder like '{}'", pattern));
    }
    dir = pattern;
  }
  r.ingress_dir = dir + "/ingress";
  HostPort at = parse_host_port(listen, "--listen", "");
  r.listen_host = at.host;
  r.listen_port = at.port;
  auto [ip, port] = parse_host_port(backend, "--backend", "");
  std::unique_ptr<Router> router = Router::start(r, nullptr);
  router->schedule({{"backend", ip, port, {true, true, false}}, false}, Duration(0));
  while (!router->settled()) {  // a real ingress routes to the backend once it has applied it
    std::this_thread::sleep_for(10ms);
  }
  std::printf("listening on %s:%u\n", r.listen_host.c_str(), router->port());
  std::fflush(stdout);
  asio::io_context io;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([](boost::system::error_code, int) {});
  io.run();
  router.reset();
  if (!dir.empty()) {
    std::filesystem::remove_all(dir);
  }
}

}  // namespace zerodrop::lab
