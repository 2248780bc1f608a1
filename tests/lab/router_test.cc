#include "lab/router.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "base/subprocess.h"
#include "lab/lab.h"

namespace zerodrop::lab {
namespace {

using namespace std::chrono_literals;

// One blocking HTTP/1.1 exchange with Connection: close. Returns the response, or "errno:N" when
// the connection failed or was reset before any byte; `local_port` gets the source port.
std::string get(uint16_t port, uint16_t* local_port = nullptr) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    int e = errno;
    ::close(fd);
    return "errno:" + std::to_string(e);
  }
  sockaddr_in me{};
  socklen_t len = sizeof me;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&me), &len);
  if (local_port != nullptr) {
    *local_port = ntohs(me.sin_port);
  }
  std::string request = "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
  (void)!::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string response;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0) {
      response = response.empty() ? "errno:" + std::to_string(errno) : response;
      break;
    }
    if (n == 0) {
      break;
    }
    response.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return response;
}

// The naive example server on 127.0.0.1:port.
Subprocess start_backend(uint16_t port, const std::string& name) {
  Subprocess s = Subprocess::spawn({{std::string(ZERODROP_EXAMPLES_DIR) + "/naive", "--host",
                                     "127.0.0.1", "--port", std::to_string(port)},
                                    {{"POD_NAME", name}}});
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (get(port).find("200 OK") == std::string::npos
         && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  return s;
}

EndpointChange ready(const std::string& pod, uint16_t port) {
  return {{pod, "127.0.0.1", port, {true, true, false}}, false};
}

// Waits until the router answers something other than a reset (its change was applied).
void wait_applied(const Router& router) {
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (get(router.port()).starts_with("errno:") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
}

TEST(Router, L4ForwardsAndRemembersTheBackendPerConnection) {
  uint16_t backend_port = pick_free_port();
  Subprocess backend = start_backend(backend_port, "pod-a");
  auto router = Router::start({"node-1", Dataplane::l4}, nullptr);
  router->schedule(ready("pod-a", backend_port), Duration(0));
  wait_applied(*router);
  uint16_t local_port = 0;
  std::string response = get(router->port(), &local_port);
  EXPECT_NE(response.find("200 OK"), std::string::npos) << response;
  EXPECT_NE(response.find("X-Pod-Name: pod-a"), std::string::npos) << response;
  EXPECT_EQ(router->backend_of(local_port), "pod-a");
}

TEST(Router, L4ResetsTheClientWhenTheBackendRefuses) {
  auto router = Router::start({"node-1", Dataplane::l4}, nullptr);
  router->schedule(ready("dead", pick_free_port()), Duration(0));  // nothing listens there
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(get(router->port()), "errno:" + std::to_string(ECONNRESET));
  EXPECT_GE(router->refusals(), 1u);
}

TEST(Router, L7Answers502NamingThePodWhenItRefuses) {
  auto router = Router::start({"node-1", Dataplane::l7}, nullptr);
  router->schedule(ready("dead", pick_free_port()), Duration(0));
  std::this_thread::sleep_for(50ms);
  std::string response = get(router->port());
  EXPECT_NE(response.find("HTTP/1.1 502"), std::string::npos) << response;
  EXPECT_NE(response.find("X-Pod-Name: dead"), std::string::npos) << response;
}

TEST(Router, L7RetriesAConnectFailureOnAnotherPod) {
  uint16_t backend_port = pick_free_port();
  Subprocess backend = start_backend(backend_port, "pod-a");
  RouterOptions options{"node-1", Dataplane::l7};
  options.retries = 1;
  auto router = Router::start(options, nullptr);
  router->schedule(ready("dead", pick_free_port()), Duration(0));
  router->schedule(ready("pod-a", backend_port), Duration(0));
  wait_applied(*router);
  for (int i = 0; i < 6; ++i) {  // round robin reaches "dead" every other request
    std::string response = get(router->port());
    EXPECT_NE(response.find("200 OK"), std::string::npos) << response;
  }
  EXPECT_GE(router->refusals(), 1u);
}

TEST(Router, AppliesChangesInOrderWhateverTheirDelays) {
  auto router = Router::start({"node-1", Dataplane::l7}, nullptr);
  router->schedule(ready("pod-a", pick_free_port()), 300ms);
  router->schedule({{"pod-a", "127.0.0.1", 1, {}}, true}, Duration(0));  // removal, drawn shorter
  std::this_thread::sleep_for(500ms);
  std::string response = get(router->port());
  EXPECT_NE(response.find("HTTP/1.1 503"), std::string::npos) << response;  // no endpoint left
}

// Changes that wait for a slower one before them land at the same instant: still in order. Each
// pod is first added not ready, then made ready: the router must end with ready endpoints (its
// l7 proxy then answers 502, as nothing listens there, rather than 503 for no endpoint).
TEST(Router, AppliesChangesDueAtTheSameInstantInOrder) {
  auto router = Router::start({"node-1", Dataplane::l7}, nullptr);
  router->schedule(ready("slow", 1), 100ms);
  router->schedule({{"slow", "127.0.0.1", 1, {}}, true}, Duration(0));
  for (int i = 0; i < 3; ++i) {
    std::string pod = "pod-" + std::to_string(i);
    uint16_t port = pick_free_port();
    router->schedule({{pod, "127.0.0.1", port, {false, false, false}}, false}, Duration(0));
    router->schedule(ready(pod, port), Duration(0));
    router->schedule({{pod, "127.0.0.1", port, {false, true, true}}, false}, Duration(0));
    router->schedule({{pod, "127.0.0.1", port, {}}, true}, Duration(0));
  }
  router->schedule(ready("last", pick_free_port()), Duration(0));
  std::this_thread::sleep_for(300ms);
  // Only "last" is left: the l7 proxy names it in its 502.
  for (int i = 0; i < 4; ++i) {
    std::string response = get(router->port());
    EXPECT_NE(response.find("HTTP/1.1 502"), std::string::npos) << response;
    EXPECT_NE(response.find("X-Pod-Name: last"), std::string::npos) << response;
  }
}

}  // namespace
}  // namespace zerodrop::lab
