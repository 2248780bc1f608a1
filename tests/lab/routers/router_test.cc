#include "lab/routers/router.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <string_view>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/listen.h"
#include "base/subprocess.h"
#include "lab/lab.h"
#include "lab/recording/recorder.h"
#include "lab/routers/router_core.h"
#include "testing/misbehaving_server.h"
#include "testing/raw_client.h"

namespace zerodrop::lab {
namespace {

using namespace std::chrono_literals;

// One blocking HTTP/1.1 exchange with Connection: close.
std::string get(uint16_t port, uint16_t* local_port = nullptr) {
  return zerodrop::testing::raw_exchange(
      port, "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", local_port);
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

// A recorder in a temporary folder, to see which changes a router applied and in what order.
class AppliedChanges {
public:
  AppliedChanges()
      : dir_(std::filesystem::temp_directory_path()
             / ("zerodrop-router-test-" + std::to_string(::getpid()) + "-"
                + ::testing::UnitTest::GetInstance()->current_test_info()->name())),
        recorder_(dir_.string(), clock_) {}

  ~AppliedChanges() { std::filesystem::remove_all(dir_); }

  Recorder* recorder() { return &recorder_; }

  // Waits (at most 5 s) until the router applied `n` changes; returns them in the order applied
  // as "pod" or "-pod" for a removal.
  std::vector<std::string> wait(size_t n) {
    auto deadline = std::chrono::steady_clock::now() + 5s;
    std::vector<std::string> applied = list();
    while (applied.size() < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(5ms);
      applied = list();
    }
    return applied;
  }

private:
  std::vector<std::string> list() {
    std::vector<std::string> out;
    for (const record::Event& e : recorder_.snapshot({}, record::Micros(0)).events) {
      if (e.kind == record::EventKind::router_applied) {
        out.push_back((e.detail == "removed" ? "-" : "") + e.pod);
      }
    }
    return out;
  }

  std::filesystem::path dir_;
  SteadyClock clock_;
  Recorder recorder_;
};

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
  AppliedChanges applied;
  auto router = Router::start({"node-1", Dataplane::l4}, applied.recorder());
  router->schedule(ready("dead", pick_free_port()), Duration(0));  // nothing listens there
  ASSERT_EQ(applied.wait(1), std::vector<std::string>{"dead"});
  EXPECT_EQ(get(router->port()), "errno:" + std::to_string(ECONNRESET));
  EXPECT_GE(router->refusals(), 1u);
}

using record::BackendFate;
using zerodrop::testing::Behaviour;
using zerodrop::testing::MisbehavingServer;

// An l4 router in front of one pod served by a MisbehavingServer; `exchange` sends one request
// through it and returns the router's record of that client connection.
struct L4Fixture {
  explicit L4Fixture(Behaviour behaviour)
      : server({behaviour, 200, "pod-a", "127.0.0.1", 0, std::chrono::milliseconds(50)}),
        router(Router::start({"node-1", Dataplane::l4}, nullptr)) {
    router->schedule(ready("pod-a", server.port()), Duration(0));
  }

  // Until the router has applied the pod (before, it refuses: no endpoint), at most 5 s.
  std::optional<ClientConnection> exchange(std::string_view request) {
    auto deadline = std::chrono::steady_clock::now() + 5s;
    for (;;) {
      uint16_t local_port = 0;
      zerodrop::testing::raw_exchange(router->port(), request, &local_port);
      std::optional<ClientConnection> c = router->connection_of(local_port);
      if (!c || c->fate != BackendFate::refused || std::chrono::steady_clock::now() > deadline) {
        return c;
      }
      std::this_thread::sleep_for(10ms);
    }
  }

  MisbehavingServer server;
  std::unique_ptr<Router> router;
};

constexpr std::string_view kKeepAlive = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";

// The pod answered, then closed the connection (Connection: close): it closed an idle connection.
TEST(Router, L4RecordsAnIdleCloseByThePod) {
  uint16_t backend_port = pick_free_port();
  Subprocess backend = start_backend(backend_port, "pod-a");
  auto router = Router::start({"node-1", Dataplane::l4}, nullptr);
  router->schedule(ready("pod-a", backend_port), Duration(0));
  wait_applied(*router);
  uint16_t local_port = 0;
  std::string response = get(router->port(), &local_port);
  EXPECT_NE(response.find("200 OK"), std::string::npos) << response;
  auto c = router->connection_of(local_port);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->pod, "pod-a");
  EXPECT_EQ(c->fate, BackendFate::idle_closed);
}

// The pod held the request 50 ms, then reset or closed the connection: a request was pending.
TEST(Router, L4RecordsAResetOrCloseWithARequestPending) {
  L4Fixture reset(Behaviour::slow_reset);
  auto c = reset.exchange(kKeepAlive);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->fate, BackendFate::reset);
  L4Fixture closed(Behaviour::slow_close);
  c = closed.exchange(kKeepAlive);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->fate, BackendFate::closed);
}

TEST(Router, L4RecordsARefusedConnection) {
  AppliedChanges applied;
  auto router = Router::start({"node-1", Dataplane::l4}, applied.recorder());
  router->schedule(ready("dead", pick_free_port()), Duration(0));
  ASSERT_EQ(applied.wait(1), std::vector<std::string>{"dead"});
  uint16_t local_port = 0;
  EXPECT_EQ(get(router->port(), &local_port), "errno:" + std::to_string(ECONNRESET));
  auto c = router->connection_of(local_port);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->pod, "dead");
  EXPECT_EQ(c->fate, BackendFate::refused);
  // Bound after the update that made "dead" usable, and stamped so in the record: the diagnosis
  // compares the two.
  record::RunRecord run = applied.recorder()->snapshot({}, record::Micros(0));
  auto update = std::find_if(run.events.begin(), run.events.end(), [](const record::Event& e) {
    return e.kind == record::EventKind::router_applied;
  });
  ASSERT_NE(update, run.events.end());
  EXPECT_GT(applied.recorder()->since_start(c->bound_at), update->t);
}

// A pod that resets a new connection at once, before the client spoke: the router keeps the client
// connection open until the client's request comes, then resets it, so that the client sees its
// request reset (its record carries its source port and joins this fate) rather than a connect
// that failed on a busy machine.
TEST(Router, L4ResetsTheClientOnlyWhenItSpeaksAfterThePodResetAnUnusedConnection) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof at;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&at), sizeof at), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&at), &len);
  std::thread pod([listener] {
    int fd = ::accept(listener, nullptr, nullptr);
    std::this_thread::sleep_for(50ms);  // after the router saw its connect complete, as a rule
    linger abortive{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abortive, sizeof abortive);
    ::close(fd);
  });
  AppliedChanges applied;
  auto router = Router::start({"node-1", Dataplane::l4}, applied.recorder());
  router->schedule(ready("pod-a", ntohs(at.sin_port)), Duration(0));
  ASSERT_EQ(applied.wait(1), std::vector<std::string>{"pod-a"});

  int client = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval wait{10, 0};
  ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(router->port());
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  sockaddr_in me{};
  len = sizeof me;
  ::getsockname(client, reinterpret_cast<sockaddr*>(&me), &len);
  auto deadline = std::chrono::steady_clock::now() + 5s;
  std::optional<ClientConnection> c;
  while ((!c || c->fate == BackendFate::open) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
    c = router->connection_of(ntohs(me.sin_port));
  }
  ::shutdown(listener, SHUT_RDWR);  // ends the pod's accept if the router never connected
  pod.join();
  ::close(listener);
  ASSERT_TRUE(c);
  // idle_closed; on a stalled machine the reset can come before the router saw its connect
  // complete (refused): either way the client connection stays open until the client speaks.
  EXPECT_TRUE(c->fate == BackendFate::idle_closed || c->fate == BackendFate::refused);
  char byte = 0;
  ssize_t n = ::recv(client, &byte, 1, MSG_DONTWAIT);
  int error = errno;
  EXPECT_EQ(n, -1);
  EXPECT_EQ(error, EAGAIN) << "the client connection was ended before the client spoke";
  std::string_view request = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
  ASSERT_EQ(::send(client, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  n = ::recv(client, &byte, 1, 0);
  error = errno;
  EXPECT_EQ(n, -1);
  EXPECT_EQ(error, ECONNRESET);
  ::close(client);
}

TEST(Router, L7Answers502NamingThePodWhenItRefuses) {
  AppliedChanges applied;
  auto router = Router::start({"node-1", Dataplane::l7}, applied.recorder());
  router->schedule(ready("dead", pick_free_port()), Duration(0));
  ASSERT_EQ(applied.wait(1), std::vector<std::string>{"dead"});
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

// The propagation schedule itself is tested in virtual time (endpoint_table_test.cc); these check
// that the router applies what it says, in its order.
TEST(Router, AppliesChangesInOrderWhateverTheirDelays) {
  AppliedChanges applied;
  auto router = Router::start({"node-1", Dataplane::l7}, applied.recorder());
  router->schedule(ready("pod-a", pick_free_port()), 300ms);
  router->schedule({{"pod-a", "127.0.0.1", 1, {}}, true}, Duration(0));  // removal, drawn shorter
  EXPECT_EQ(applied.wait(2), (std::vector<std::string>{"pod-a", "-pod-a"}));
  std::string response = get(router->port());
  EXPECT_NE(response.find("HTTP/1.1 503"), std::string::npos) << response;  // no endpoint left
}

// Changes that wait for a slower one before them land at the same instant: still in order. Each
// pod is first added not ready, then made ready: the router must end with ready endpoints (its
// l7 proxy then answers 502, as nothing listens there, rather than 503 for no endpoint).
TEST(Router, AppliesChangesDueAtTheSameInstantInOrder) {
  AppliedChanges applied;
  auto router = Router::start({"node-1", Dataplane::l7}, applied.recorder());
  router->schedule(ready("slow", 1), 100ms);
  router->schedule({{"slow", "127.0.0.1", 1, {}}, true}, Duration(0));
  std::vector<std::string> want = {"slow", "-slow"};
  for (int i = 0; i < 3; ++i) {
    std::string pod = "pod-" + std::to_string(i);
    uint16_t port = pick_free_port();
    router->schedule({{pod, "127.0.0.1", port, {false, false, false}}, false}, Duration(0));
    router->schedule(ready(pod, port), Duration(0));
    router->schedule({{pod, "127.0.0.1", port, {false, true, true}}, false}, Duration(0));
    router->schedule({{pod, "127.0.0.1", port, {}}, true}, Duration(0));
    want.insert(want.end(), {pod, pod, pod, "-" + pod});
  }
  router->schedule(ready("last", pick_free_port()), Duration(0));
  want.push_back("last");
  EXPECT_EQ(applied.wait(want.size()), want);
  // Only "last" is left: the l7 proxy names it in its 502.
  for (int i = 0; i < 4; ++i) {
    std::string response = get(router->port());
    EXPECT_NE(response.find("HTTP/1.1 502"), std::string::npos) << response;
    EXPECT_NE(response.find("X-Pod-Name: last"), std::string::npos) << response;
  }
}

// The lab sends its first request once every router is settled. A router whose thread runs late
// (a busy machine) has not applied a change whose time has come: it is not settled until it has,
// or the first requests would find no endpoint (and fail as a capacity dip no rollout caused).
TEST(Router, IsSettledOnlyOnceItsThreadHasAppliedEveryChange) {
  for (Dataplane dataplane : {Dataplane::l4, Dataplane::l7}) {
    auto router = Router::start({"node-1", dataplane}, nullptr);
    auto* core = dynamic_cast<RouterCore*>(router.get());
    ASSERT_NE(core, nullptr);
    std::promise<void> release;
    boost::asio::post(core->io(), [held = release.get_future().share()] { held.wait(); });
    EXPECT_TRUE(router->settled());
    router->schedule(ready("pod-a", pick_free_port()), Duration(0));
    std::this_thread::sleep_for(20ms);  // the change is due; the router's thread is held
    EXPECT_FALSE(router->settled()) << to_string(dataplane);
    release.set_value();
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!router->settled() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(5ms);
    }
    EXPECT_TRUE(router->settled()) << to_string(dataplane);
  }
}

// An l7 router in front of one pod served by a MisbehavingServer.
struct L7Fixture {
  explicit L7Fixture(Behaviour behaviour, RouterOptions options = {"node-1", Dataplane::l7})
      : server({behaviour, 200, "pod-a"}), router(Router::start(options, nullptr)) {
    router->schedule(ready("pod-a", server.port()), Duration(0));
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (get(router->port()).find("503") != std::string::npos
           && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
  }

  MisbehavingServer server;
  std::unique_ptr<Router> router;
};

TEST(Router, L7RelaysAHeadResponseWithContentLengthAndNoBody) {
  // nginx answers HEAD with the Content-Length a GET would have: the router must not wait for it.
  L7Fixture lab(Behaviour::head_length);
  zerodrop::testing::expect_head_then_get(
      zerodrop::testing::raw_exchange(lab.router->port(), zerodrop::testing::kHeadThenGet));
}

TEST(Router, L7DropsHopByHopHeadersBothWays) {
  L7Fixture lab(Behaviour::echo);
  std::string response = zerodrop::testing::raw_exchange(
      lab.router->port(),
      "GET / HTTP/1.1\r\nHost: t\r\nConnection: close, X-Client-Hop\r\n"
      "X-Client-Hop: 1\r\nKeep-Alive: 300\r\nProxy-Connection: x\r\n"
      "TE: trailers\r\nUpgrade: h2c\r\nX-End-To-End: kept\r\n\r\n");
  size_t body = response.find("\r\n\r\n");
  ASSERT_NE(body, std::string::npos) << response;
  std::string headers = response.substr(0, body);
  std::string upstream = response.substr(body + 4);  // the request as the pod received it
  EXPECT_NE(upstream.find("X-End-To-End: kept"), std::string::npos) << upstream;
  for (const char* hop : {"X-Client-Hop", "Keep-Alive", "Proxy-Connection", "TE:", "Upgrade"}) {
    EXPECT_EQ(upstream.find(hop), std::string::npos) << hop << " reached the pod: " << upstream;
  }
  EXPECT_EQ(upstream.find("close"), std::string::npos) << "upstream connections are kept alive";
  for (const char* hop : {"X-Hop", "Keep-Alive", "Proxy-Connection", "X-Zerodrop-Router-Error"}) {
    EXPECT_EQ(headers.find(hop), std::string::npos) << hop << " reached the client: " << headers;
  }
  EXPECT_NE(headers.find("Connection: close"), std::string::npos) << headers;
}

TEST(Router, L7ConsumesInterimResponses) {
  L7Fixture lab(Behaviour::interim);
  std::string response = get(lab.router->port());
  EXPECT_TRUE(response.starts_with("HTTP/1.1 200 OK")) << response;
  EXPECT_EQ(response.find(" 100 "), std::string::npos) << response;
  EXPECT_TRUE(response.ends_with("ok")) << response;
}

TEST(Router, L7AnswersAnHttp10ClientInHttp10AndCloses) {
  L7Fixture lab(Behaviour::echo);
  std::string response =
      zerodrop::testing::raw_exchange(lab.router->port(), "GET / HTTP/1.0\r\n\r\n");
  EXPECT_TRUE(response.starts_with("HTTP/1.0 200 OK")) << response;  // and it closed: we returned
  EXPECT_NE(response.find("GET / HTTP/1.1\r\n"), std::string::npos)
      << "the upstream request is HTTP/1.1: " << response;
  std::string kept =
      zerodrop::testing::raw_exchange(lab.router->port(),
                                      "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
                                      "GET / HTTP/1.0\r\n\r\n");
  EXPECT_EQ(zerodrop::testing::occurrences(kept, "HTTP/1.0 200 OK"), 2u) << kept;
  EXPECT_NE(kept.find("Connection: keep-alive"), std::string::npos) << kept;
}

TEST(Router, L7SaysWhyItAnsweredItself) {
  {
    auto router = Router::start({"node-1", Dataplane::l7}, nullptr);
    std::string response = get(router->port());
    EXPECT_TRUE(response.starts_with("HTTP/1.1 503")) << response;
    EXPECT_NE(response.find("X-Zerodrop-Router-Error: no_endpoint"), std::string::npos) << response;
    router->schedule(ready("dead", pick_free_port()), Duration(0));
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (response.starts_with("HTTP/1.1 503") && std::chrono::steady_clock::now() < deadline) {
      response = get(router->port());
    }
    EXPECT_NE(response.find("X-Zerodrop-Router-Error: connect_refused"), std::string::npos)
        << response;
  }
  RouterOptions quick{"node-1", Dataplane::l7};
  quick.upstream_timeout = 200ms;
  L7Fixture stalled(Behaviour::stall, quick);
  std::string response = get(stalled.router->port());
  EXPECT_TRUE(response.starts_with("HTTP/1.1 504")) << response;
  EXPECT_NE(response.find("X-Zerodrop-Router-Error: upstream_timeout"), std::string::npos)
      << response;
  L7Fixture garbage(Behaviour::garbage);
  // Connection: close, or the exchange would wait out raw_exchange's 10 s for a kept connection.
  response = zerodrop::testing::raw_exchange(
      garbage.router->port(), "HEAD / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(response.starts_with("HTTP/1.1 502")) << response;
  EXPECT_NE(response.find("X-Zerodrop-Router-Error: bad_response"), std::string::npos) << response;
  EXPECT_TRUE(response.ends_with("\r\n\r\n")) << "no body after HEAD: " << response;
}

// The kernel's account of a backend connection's close, as both the l4 router and the nftables
// router judge it: the exit's close is what the client saw; the pod's own reset means its
// request sat unread; its own FIN, that it read the request, or that the request came after.
TEST(Router, JudgesACloseByTheKernelsAccount) {
  SocketClose exit{.t_ns = 1, .tid = 7, .by_exit = true, .reset = true};
  EXPECT_EQ(fate_of_close(exit, BackendFate::reset, false), BackendFate::reset);
  EXPECT_EQ(fate_of_close(exit, BackendFate::closed, false), BackendFate::closed);
  SocketClose own_reset{.t_ns = 1, .tid = 7, .by_exit = false, .reset = true};
  EXPECT_EQ(fate_of_close(own_reset, BackendFate::reset, true), BackendFate::idle_closed);
  SocketClose own_fin{.t_ns = 1, .tid = 7, .by_exit = false, .reset = false};
  EXPECT_EQ(fate_of_close(own_fin, BackendFate::closed, true), BackendFate::closed);
  EXPECT_EQ(fate_of_close(own_fin, BackendFate::closed, false), BackendFate::idle_closed);
}

// Both routers' log of client connections: the latest per port, and by a time the one bound
// then (a later connection reused the port); the oldest go after a few.
TEST(Router, KeepsTheLatestConnectionsOfEachClientPort) {
  ClientConnections log;
  Clock::time_point t0{std::chrono::seconds(10)};
  for (int i = 0; i < 10; ++i) {
    log.add(40000, ClientConnection{fmt::format("pod-{}", i), t0 + std::chrono::seconds(i)});
  }
  EXPECT_EQ(log.latest(40000)->pod, "pod-9");
  EXPECT_EQ(log.latest_by(40000, t0 + 4500ms)->pod, "pod-4");
  EXPECT_FALSE(log.latest_by(40000, t0 + 1s)) << "the oldest two are no longer kept";
  EXPECT_FALSE(log.latest(40001));
  log.latest_to_update(40000)->fate = BackendFate::reset;
  EXPECT_EQ(log.latest(40000)->fate, BackendFate::reset);
}

}  // namespace
}  // namespace zerodrop::lab
