// The l7 router over HTTP/2: the load engine (h2c, gRPC) on one side, the HTTP/2 misbehaving
// test server as the pods on the other. Every check counts records; none depends on timing
// beyond generous deadlines.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "lab/recording/recorder.h"
#include "lab/routers/router.h"
#include "load/load.h"
#include "testing/h2_server.h"

namespace zerodrop::lab {
namespace {

using namespace std::chrono_literals;
using load::Protocol;
using record::Outcome;
using testing::Grpc;
using testing::H2Mode;
using testing::H2Server;
using testing::H2ServerOptions;

EndpointChange ready_endpoint(const std::string& pod, uint16_t port) {
  return {{pod, "127.0.0.1", port, {true, true, false}}, false};
}

// How many requests the load has in flight at once: a few, or one after the other.
enum class InFlight { several, one };

// `n` requests through `port` (h2c or gRPC), one record each.
std::vector<record::RequestRecord> send(uint16_t port, Protocol protocol, uint64_t n = 12,
                                        load::RetryUnprocessed retry = load::RetryUnprocessed::once,
                                        InFlight in_flight = InFlight::several) {
  load::Options o;
  o.targets = {{"GET", "http://127.0.0.1:" + std::to_string(port) + "/"}};
  o.rate = 200;
  o.duration = 5s;
  o.max_requests = n;
  o.connections = in_flight == InFlight::one ? 1 : 2;
  o.streams = in_flight == InFlight::one ? 1 : 8;
  o.timeout = 3s;
  o.protocol = protocol;
  o.retry_unprocessed = retry;
  if (protocol == Protocol::grpc) {
    o.grpc_method = "zd.Echo/Call";
    o.body = "hello";
  }
  std::vector<record::RequestRecord> records;
  load::Hooks hooks;
  hooks.on_record = [&](const record::RequestRecord& r) {
    records.push_back(r);
  };
  load::run(o, hooks);
  return records;
}

// An l7 router whose endpoints are `pods` (name, port), applied before it is used; its records
// in a temporary folder.
class Lab {
public:
  explicit Lab(const std::vector<std::pair<std::string, uint16_t>>& pods,
               RouterOptions options = {"node-1", Dataplane::l7})
      : dir_(std::filesystem::temp_directory_path()
             / ("zerodrop-l7h2-test-" + std::to_string(::getpid()) + "-"
                + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-"
                + std::to_string(++serial_))),
        recorder_(dir_.string(), clock_),
        router_(Router::start(options, &recorder_)) {
    for (const auto& [name, port] : pods) {
      router_->schedule(ready_endpoint(name, port), Duration(0));
    }
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (applied() < pods.size() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(5ms);
    }
  }

  ~Lab() {
    router_.reset();
    std::filesystem::remove_all(dir_);
  }

  Router* operator->() { return router_.get(); }

private:
  size_t applied() {
    auto events = recorder_.snapshot({}, record::Micros(0)).events;
    return static_cast<size_t>(std::count_if(events.begin(), events.end(), [](const auto& e) {
      return e.kind == record::EventKind::router_applied;
    }));
  }

  static inline int serial_ = 0;
  std::filesystem::path dir_;
  SteadyClock clock_;
  Recorder recorder_;
  std::unique_ptr<Router> router_;
};

size_t count(const std::vector<record::RequestRecord>& records, Outcome outcome) {
  return static_cast<size_t>(std::count_if(records.begin(), records.end(),
                                           [&](const auto& r) { return r.outcome == outcome; }));
}

std::string first_error(const std::vector<record::RequestRecord>& records) {
  return records.empty() ? "no record"
                         : records.front().error + " / " + records.front().router_error;
}

TEST(L7H2, RelaysGrpcAndPlainHttp2NamingThePod) {
  H2Server pod({.grpc = Grpc::on, .name = "pod-a"});
  Lab router({{"pod-a", pod.port()}});
  auto grpc = send(router->port(), Protocol::grpc);
  ASSERT_EQ(grpc.size(), 12u);
  EXPECT_EQ(count(grpc, Outcome::ok), 12u) << first_error(grpc);
  for (const auto& r : grpc) {
    EXPECT_EQ(r.backend, "pod-a");
    EXPECT_TRUE(r.router_error.empty());
    ASSERT_TRUE(r.h2 && r.h2->grpc_status);
    EXPECT_EQ(*r.h2->grpc_status, 0);
  }
  H2Server plain({.name = "pod-b"});
  Lab router2({{"pod-b", plain.port()}});
  auto h2 = send(router2->port(), Protocol::http2);
  EXPECT_EQ(count(h2, Outcome::ok), 12u) << first_error(h2);
  EXPECT_EQ(h2.front().status, 200);
  EXPECT_EQ(h2.front().backend, "pod-b");
}

TEST(L7H2, SpreadsStreamsOfOneConnectionOverThePods) {
  H2Server a({.grpc = Grpc::on, .name = "pod-a"});
  H2Server b({.grpc = Grpc::on, .name = "pod-b"});
  Lab router({{"pod-a", a.port()}, {"pod-b", b.port()}});
  auto records = send(router->port(), Protocol::grpc, 20);
  EXPECT_EQ(count(records, Outcome::ok), 20u) << first_error(records);
  EXPECT_EQ(a.requests() + b.requests(), 20u);
  EXPECT_EQ(a.requests(), 10u) << "round robin per stream, not per connection";
}

TEST(L7H2, AnswersItsOwnErrorsInGrpcAndSaysWhy) {
  Lab none({});
  auto grpc = send(none->port(), Protocol::grpc, 4);
  ASSERT_EQ(count(grpc, Outcome::grpc_unavailable), 4u) << first_error(grpc);
  EXPECT_EQ(grpc.front().router_error, "no_endpoint");
  auto h2 = send(none->port(), Protocol::http2, 4);
  ASSERT_EQ(count(h2, Outcome::http_503), 4u) << first_error(h2);
  EXPECT_EQ(h2.front().router_error, "no_endpoint");

  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len);
  uint16_t dead = ntohs(addr.sin_port);  // bound, never listening: connections are refused
  Lab refused({{"pod-dead", dead}});
  grpc = send(refused->port(), Protocol::grpc, 4);
  ::close(s);
  ASSERT_EQ(count(grpc, Outcome::grpc_unavailable), 4u) << first_error(grpc);
  EXPECT_EQ(grpc.front().router_error, "connect_refused");
  EXPECT_EQ(grpc.front().backend, "pod-dead");
  EXPECT_EQ(refused->refusals(), 4u);

  RouterOptions quick{"node-1", Dataplane::l7};
  quick.upstream_timeout = 200ms;
  H2Server stall({.mode = H2Mode::stall, .grpc = Grpc::on});
  Lab slow({{"pod-a", stall.port()}}, quick);
  grpc = send(slow->port(), Protocol::grpc, 2);
  ASSERT_EQ(count(grpc, Outcome::grpc_deadline_exceeded), 2u) << first_error(grpc);
  EXPECT_EQ(grpc.front().router_error, "upstream_timeout");
}

TEST(L7H2, RetriesAConnectFailureOnAnotherPodWithinRetries) {
  H2Server live({.grpc = Grpc::on, .name = "live"});
  RouterOptions options{"node-1", Dataplane::l7};
  options.retries = 1;
  // Port 1 on loopback: nothing listens there.
  Lab router({{"dead", 1}, {"live", live.port()}}, options);
  auto records = send(router->port(), Protocol::grpc, 8);
  EXPECT_EQ(count(records, Outcome::ok), 8u) << first_error(records);
}

TEST(L7H2, ResendsAStreamThePodRefusedToAnotherPod) {
  H2Server refusing({.mode = H2Mode::refuse, .grpc = Grpc::on, .name = "draining"});
  H2Server ok({.grpc = Grpc::on, .name = "ok"});
  Lab router({{"draining", refusing.port()}, {"ok", ok.port()}});
  auto records = send(router->port(), Protocol::grpc, 10, load::RetryUnprocessed::never);
  EXPECT_EQ(count(records, Outcome::ok), 10u) << first_error(records);
  EXPECT_GT(refusing.requests(), 0u) << "round robin sent some to the refusing pod first";
  for (const auto& r : records) {
    EXPECT_EQ(r.backend, "ok");
    EXPECT_EQ(r.h2->attempts, 1u) << "the router resent it, not the client";
  }
}

TEST(L7H2, RefusesToTheClientWhatNoPodProcessed) {
  H2Server refusing({.mode = H2Mode::refuse, .grpc = Grpc::on});
  Lab router({{"draining", refusing.port()}});
  auto records = send(router->port(), Protocol::grpc, 4, load::RetryUnprocessed::never);
  EXPECT_EQ(count(records, Outcome::refused_stream), 4u) << first_error(records);
}

TEST(L7H2, ResendsWhatAPodLeftAboveItsGoawayToAnotherPod) {
  // From the second stream of a connection on: GOAWAY(the stream before it), then the close.
  H2Server single({.mode = H2Mode::goaway_single, .grpc = Grpc::on, .after = 1, .name = "leaving"});
  H2Server ok({.grpc = Grpc::on, .name = "ok"});
  Lab router({{"leaving", single.port()}, {"ok", ok.port()}});
  auto records = send(router->port(), Protocol::grpc, 8, load::RetryUnprocessed::never);
  ASSERT_EQ(records.size(), 8u);
  uint64_t by_leaving = 0;
  for (const auto& r : records) {
    if (r.backend == "leaving") {
      ++by_leaving;
      // Answered, or cut: the test pod closes at once after its GOAWAY, so a stream it had
      // accepted (at or below the GOAWAY's id) may lose its answer, as the router says.
      EXPECT_TRUE(r.outcome == Outcome::ok || r.router_error == "upstream_closed"
                  || r.router_error == "upstream_reset")
          << r.error;
    } else {
      EXPECT_EQ(r.outcome, Outcome::ok) << r.error;
    }
  }
  EXPECT_GT(single.requests(), by_leaving)
      << "the pod left some streams unprocessed, and the router resent them to the other pod";
}

// Every record failed: the router's UNAVAILABLE naming `why` (at least one), or, for a stream the
// router had not yet written when the pod's connection ended, refused to the client.
void expect_router_failures(const std::vector<record::RequestRecord>& records,
                            const std::vector<std::string>& why) {
  size_t unavailable = 0;
  for (const auto& r : records) {
    if (r.outcome == Outcome::grpc_unavailable) {
      ++unavailable;
      EXPECT_NE(std::find(why.begin(), why.end(), r.router_error), why.end()) << r.router_error;
      EXPECT_EQ(r.backend, "pod-a");
    } else {
      EXPECT_EQ(r.outcome, Outcome::refused_stream) << r.error;
    }
  }
  EXPECT_GT(unavailable, 0u) << first_error(records);
}

TEST(L7H2, DrainsWithTheGracefulPodWithoutALoss) {
  H2Server pod({.mode = H2Mode::goaway_graceful, .grpc = Grpc::on, .after = 2, .delay = 20ms});
  Lab router({{"pod-a", pod.port()}});
  // One at a time, so that each request after the third finds the GOAWAY already received.
  auto records =
      send(router->port(), Protocol::grpc, 8, load::RetryUnprocessed::never, InFlight::one);
  EXPECT_EQ(count(records, Outcome::ok), 8u) << first_error(records);
  EXPECT_GT(pod.connections(), 1u) << "a new upstream connection after each GOAWAY";
}

TEST(L7H2, TurnsAPodsAbruptCloseIntoUnavailable) {
  H2Server pod({.mode = H2Mode::close_no_goaway, .grpc = Grpc::on, .after = 0});
  Lab router({{"pod-a", pod.port()}});
  auto records = send(router->port(), Protocol::grpc, 4, load::RetryUnprocessed::never);
  ASSERT_EQ(records.size(), 4u);
  expect_router_failures(records, {"upstream_closed", "upstream_reset"});
}

// A pod that breaks HTTP/2 (garbage frames, a huge header block) is the router's bad_response,
// which the diagnosis never counts against the app.
TEST(L7H2, SurvivesAHostilePod) {
  for (H2Mode mode : {H2Mode::garbage_frames, H2Mode::huge_headers}) {
    H2Server pod({.mode = mode, .grpc = Grpc::on, .after = 0});
    Lab router({{"pod-a", pod.port()}});
    auto records = send(router->port(), Protocol::grpc, 3, load::RetryUnprocessed::never);
    ASSERT_EQ(records.size(), 3u);
    expect_router_failures(records, {"bad_response"});
  }
}

// A client that sends the preface and then garbage gets a GOAWAY and a closed connection; the
// router then serves the next client.
TEST(L7H2, SurvivesAHostileClient) {
  H2Server pod({.grpc = Grpc::on});
  Lab router({{"pod-a", pod.port()}});
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(router->port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  std::string bytes = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  bytes += std::string("\x00\x00\x04\x00\x00\x00\x00\x00\x00garbage-after-the-preface", 34);
  ASSERT_EQ(::send(s, bytes.data(), bytes.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bytes.size()));
  std::string got;
  char buffer[4096];
  pollfd p{s, POLLIN, 0};
  while (::poll(&p, 1, 5000) > 0) {
    ssize_t n = ::recv(s, buffer, sizeof buffer, 0);
    if (n <= 0) {
      break;
    }
    got.append(buffer, static_cast<size_t>(n));
  }
  ::close(s);
  EXPECT_NE(got.find(std::string("\x07\x00\x00\x00\x00\x00", 6)), std::string::npos)
      << "a GOAWAY frame (type 7 on stream 0) before the close";
  auto records = send(router->port(), Protocol::grpc, 3);
  EXPECT_EQ(count(records, Outcome::ok), 3u) << first_error(records);
}

}  // namespace
}  // namespace zerodrop::lab
