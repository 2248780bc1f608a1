// The l4 router with the kernel's account of each close (SocketTrace): a pod's close or exit is
// judged by what the kernel saw, however late on a busy machine it comes. Root only.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "base/subprocess.h"
#include "lab/routers/router.h"
#include "lab/routers/socket_trace.h"
#include "testing/raw_client.h"

namespace zerodrop::lab {
namespace {

using namespace std::chrono_literals;
using record::BackendFate;

constexpr std::string_view kRequest = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";

uint32_t ip_of(const char* text) {
  in_addr a{};
  inet_pton(AF_INET, text, &a);
  return a.s_addr;
}

// A pod on its own loopback address that does `act` with the first connection it accepts.
class OneShotPod {
public:
  OneShotPod(const char* ip, std::function<void(int fd)> act) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = ip_of(ip);
    bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(listener_, 4);
    socklen_t n = sizeof a;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &n);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this, act = std::move(act)] {
      int fd = accept(listener_, nullptr, nullptr);
      if (fd >= 0) {
        act(fd);
      }
    });
  }

  ~OneShotPod() {
    shutdown(listener_, SHUT_RDWR);
    thread_.join();
    close(listener_);
  }

  uint16_t port() const { return port_; }

private:
  int listener_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
};

// Waits until the request's bytes sit in the pod's socket.
void wait_readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  poll(&p, 1, 5000);
}

class RouterTraceTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    uint32_t net = ip_of("127.79.0.0");
    trace_ =
        SocketTrace::start([net](uint32_t ip) { return (ip & htonl(0xffff0000U)) == net; }, &why);
    if (!trace_) {
      GTEST_SKIP() << "the kernel's socket trace is not available here: " << why;
    }
  }

  // One keep-alive request through an l4 router (with the trace) to the pod at ip:port; the
  // router's record of that client connection.
  std::optional<ClientConnection> exchange(const char* ip, uint16_t port) {
    RouterOptions o;
    o.socket_trace = trace_.get();
    auto router = Router::start(o, nullptr);
    router->schedule({{"pod-a", ip, port, {true, true, false}}, false}, Duration(0));
    std::this_thread::sleep_for(50ms);  // applied (no recorder to wait on)
    uint16_t local_port = 0;
    zerodrop::testing::raw_exchange(router->port(), kRequest, &local_port);
    return router->connection_of(local_port);
  }

  std::unique_ptr<SocketTrace> trace_;
};

// node's closeIdleConnections on a busy machine: the request sat 30 ms unread in the socket
// before the app closed it as idle. By timing alone the router would call it a reset under a
// pending request (no-drain); the kernel says the app's own close found it unread.
TEST_F(RouterTraceTest, AnAppsCloseWithTheRequestUnreadIsAnIdleCloseHoweverLate) {
  OneShotPod pod("127.79.0.1", [](int fd) {
    wait_readable(fd);
    std::this_thread::sleep_for(30ms);
    close(fd);
  });
  auto c = exchange("127.79.0.1", pod.port());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->fate, BackendFate::idle_closed);
}

// The app read the request and closed without answering (at once: by timing, within the race
// window, this read as an idle close).
TEST_F(RouterTraceTest, AnAppThatReadTheRequestAndClosedLeftItPending) {
  OneShotPod pod("127.79.0.2", [](int fd) {
    wait_readable(fd);
    char buffer[512];
    [[maybe_unused]] ssize_t n = read(fd, buffer, sizeof buffer);
    close(fd);
  });
  auto c = exchange("127.79.0.2", pod.port());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->fate, BackendFate::closed);
}

// A process that exits with the request unread: its exit reset the connection under it.
TEST_F(RouterTraceTest, AnExitWithTheRequestUnreadIsAReset) {
  const char* script =
      "import os, select, socket, sys, time\n"
      "s = socket.socket(); s.bind(('127.79.0.3', 0)); s.listen(4)\n"
      "print(s.getsockname()[1], flush=True)\n"
      "c, _ = s.accept(); select.select([c], [], [], 5); time.sleep(0.03); os._exit(0)\n";
  std::string ready = ::testing::TempDir() + "router-trace-exit-pod";
  std::remove(ready.c_str());
  Subprocess pod = Subprocess::spawn({{"python3", "-c", script}, {}, ready});
  std::string port_text;
  for (int i = 0; i < 1000 && port_text.empty(); ++i) {
    std::this_thread::sleep_for(10ms);
    std::ifstream in(ready);
    std::getline(in, port_text);
  }
  ASSERT_FALSE(port_text.empty()) << "the pod did not start";
  auto c = exchange("127.79.0.3", static_cast<uint16_t>(std::stoi(port_text)));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->fate, BackendFate::reset);
}

}  // namespace
}  // namespace zerodrop::lab
