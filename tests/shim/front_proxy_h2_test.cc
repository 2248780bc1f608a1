// zerodrop run's front proxy over h2c: the load engine (gRPC) on one side, the HTTP/2 test server
// as the app on the other. Checks count records and GOAWAY frames; the only timing is the app's
// answer delay, long next to the gap between the two GOAWAYs.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio.hpp>
#include <gtest/gtest.h>

#include "load/load.h"
#include "shim/front_proxy.h"
#include "testing/h2_server.h"
#include "zerodrop/lifecycle/shutdown.h"

namespace zerodrop::shim {
namespace {

using namespace std::chrono_literals;
using record::Outcome;
using testing::Grpc;
using testing::H2Mode;
using testing::H2Server;

constexpr uint32_t kNoticeStreamId = (1U << 31) - 1;  // RFC 9113 §6.8's first GOAWAY

// The front proxy on its own thread in front of the app at `app_port`; the stop signal's delay
// is long, so it keeps accepting (and draining each connection) for the whole test.
struct H2Front {
  explicit H2Front(uint16_t app_port)
      : shutdown(lifecycle::Options{60s, 120s, {}}),
        proxy(io, shutdown, {"127.0.0.1", 0}, {"127.0.0.1", app_port}, 100ms),
        thread([this] { io.run(); }) {}

  ~H2Front() {
    io.stop();
    thread.join();
  }

  lifecycle::Shutdown shutdown;  // outlives the io_context, whose handlers hold its connections
  boost::asio::io_context io;
  FrontProxy proxy;
  std::thread thread;
};

// What the load saw: its records and the GOAWAY frames each connection received, in order.
struct Seen {
  std::mutex mutex;
  std::vector<record::RequestRecord> records;
  std::vector<std::pair<uint32_t, uint32_t>> goaways;  // connection, last stream id
  std::atomic<size_t> done{0};
};

// `n` unary gRPC calls at `rate` through `port`.
void call(uint16_t port, uint64_t n, double rate, load::RetryUnprocessed retry, Seen& seen) {
  load::Options o;
  o.targets = {{"GET", "http://127.0.0.1:" + std::to_string(port) + "/"}};
  o.rate = rate;
  o.duration = 30s;
  o.max_requests = n;
  o.connections = 4;
  o.streams = 100;
  o.timeout = 5s;
  o.protocol = load::Protocol::grpc;
  o.retry_unprocessed = retry;
  o.grpc_method = "zd.Echo/Call";
  o.body = "hello";
  load::Hooks hooks;
  hooks.on_record = [&](const record::RequestRecord& r) {
    std::lock_guard lock(seen.mutex);
    seen.records.push_back(r);
    ++seen.done;
  };
  hooks.on_connection_event = [&](const load::ConnectionEvent& e) {
    if (e.kind == record::EventKind::goaway_received && e.facts.goaway) {
      std::lock_guard lock(seen.mutex);
      seen.goaways.emplace_back(e.facts.conn, e.facts.goaway->last_stream_id);
    }
  };
  load::run(o, hooks);
}

size_t count_outcome(const std::vector<record::RequestRecord>& records, Outcome outcome) {
  return static_cast<size_t>(std::count_if(records.begin(), records.end(),
                                           [&](const auto& r) { return r.outcome == outcome; }));
}

std::string first_failure(const std::vector<record::RequestRecord>& records) {
  for (const auto& r : records) {
    if (r.outcome != Outcome::ok) {
      return r.error + " / " + r.router_error;
    }
  }
  return "none";
}

TEST(FrontProxyH2, RelaysGrpcOnTheHttp1Port) {
  H2Server app({.grpc = Grpc::on, .name = "app"});
  H2Front front(app.port());
  Seen seen;
  call(front.proxy.port(), 12, 200, load::RetryUnprocessed::once, seen);
  ASSERT_EQ(seen.records.size(), 12u);
  EXPECT_EQ(count_outcome(seen.records, Outcome::ok), 12u) << first_failure(seen.records);
  for (const auto& r : seen.records) {
    ASSERT_TRUE(r.h2 && r.h2->grpc_status);
    EXPECT_EQ(*r.h2->grpc_status, 0);
    EXPECT_EQ(r.backend, "app");  // the app's own x-pod-name, not one the proxy made up
  }
  EXPECT_TRUE(seen.goaways.empty()) << "no stop signal, no GOAWAY";
}

// At the stop signal each connection gets GOAWAY(2^31-1), then the final one with the last
// stream it took; streams in flight are answered, later calls go to new connections, which get
// the same pair: nothing fails.
TEST(FrontProxyH2, DrainsWithTheDoubleGoawayAtTheStopSignal) {
  H2Server app({.grpc = Grpc::on, .name = "app", .delay = 300ms});
  H2Front front(app.port());
  Seen seen;
  std::thread load([&] { call(front.proxy.port(), 50, 50, load::RetryUnprocessed::once, seen); });
  while (seen.done < 5) {
    std::this_thread::sleep_for(5ms);
  }
  front.shutdown.begin(lifecycle::Clock::now());
  load.join();
  ASSERT_EQ(seen.records.size(), 50u);
  // What the double GOAWAY promises: no call the app started is cut. A call the client's own
  // nghttp2 held back after reading a notice, twice (on its connection, then on its resend's new
  // one, which the draining proxy also greets with the notice), ends goaway_unprocessed: never
  // sent, so never lost by the proxy (seen on a loaded machine: 5 of 50).
  EXPECT_EQ(count_outcome(seen.records, Outcome::ok)
                + count_outcome(seen.records, Outcome::goaway_unprocessed),
            50u)
      << first_failure(seen.records);
  EXPECT_GT(count_outcome(seen.records, Outcome::ok), 0u);
  std::map<uint32_t, std::vector<uint32_t>> by_connection;  // last stream ids, in order
  for (const auto& [conn, last] : seen.goaways) {
    by_connection[conn].push_back(last);
  }
  size_t pairs = 0;
  for (const auto& [conn, ids] : by_connection) {
    ASSERT_LE(ids.size(), 2u) << "connection " << conn;
    EXPECT_EQ(ids[0], kNoticeStreamId) << "connection " << conn << ": the notice first";
    if (ids.size() == 2) {
      ++pairs;
      EXPECT_EQ(ids[1] % 2, 1u) << "connection " << conn << ": a client stream id";
    }
  }
  EXPECT_GE(pairs, 2u) << "the connection open at the signal and one opened after it";
  // No resend count is asserted: a stream the client sent before it read the notice, still
  // unread in the proxy's socket when the final GOAWAY leaves 100 ms later, is above its last
  // stream id and so resent, as RFC 9113 allows (seen once on a loaded machine). Every call
  // still ended ok, which is what the double GOAWAY promises.
}

// No app to connect to: nothing was sent, so each stream is refused (REFUSED_STREAM), which a
// client may resend; it is not an answer the app gave.
TEST(FrontProxyH2, RefusesStreamsWhenTheAppIsGone) {
  uint16_t gone = 0;
  {
    H2Server app({.grpc = Grpc::on});
    gone = app.port();
  }
  H2Front front(gone);
  Seen seen;
  call(front.proxy.port(), 4, 200, load::RetryUnprocessed::never, seen);
  ASSERT_EQ(seen.records.size(), 4u);
  EXPECT_EQ(count_outcome(seen.records, Outcome::refused_stream), 4u)
      << first_failure(seen.records);
}

// The app closes its connection under a stream it took: the proxy answers that stream itself,
// trailers-only gRPC UNAVAILABLE, and says why.
TEST(FrontProxyH2, AnswersUnavailableForStreamsTheAppDroppedInFlight) {
  H2Server app({.mode = H2Mode::close_no_goaway, .grpc = Grpc::on, .after = 0});
  H2Front front(app.port());
  Seen seen;
  call(front.proxy.port(), 4, 200, load::RetryUnprocessed::never, seen);
  ASSERT_EQ(seen.records.size(), 4u);
  EXPECT_EQ(count_outcome(seen.records, Outcome::grpc_unavailable), 4u)
      << first_failure(seen.records);
  for (const auto& r : seen.records) {
    EXPECT_TRUE(r.router_error == "upstream_closed" || r.router_error == "upstream_reset")
        << r.router_error;
    ASSERT_TRUE(r.h2);
    EXPECT_NE(r.h2->grpc_message.find("zerodrop run"), std::string::npos) << r.h2->grpc_message;
  }
}

}  // namespace
}  // namespace zerodrop::shim
