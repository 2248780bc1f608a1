// The engine over HTTP/2 and gRPC against a server that misbehaves on purpose: every behaviour
// lands in its class, and requests refused unprocessed are resent once.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "base/error.h"
#include "load/load.h"
#include "testing/h2_server.h"

namespace zerodrop::load {
namespace {

using namespace std::chrono_literals;
using record::Outcome;
using testing::Grpc;
using testing::H2Mode;
using testing::H2Server;
using testing::H2ServerOptions;

struct Result {
  Summary summary;
  std::vector<record::RequestRecord> records;
};

Options h2_options(const std::string& url, Protocol protocol = Protocol::http2) {
  Options o;
  o.targets = {{"GET", url}};
  o.rate = 40;
  o.duration = 250ms;
  o.connections = 2;
  o.timeout = 400ms;
  o.connect_timeout = 1s;
  o.protocol = protocol;
  o.streams = 8;
  if (protocol == Protocol::grpc) {
    o.grpc_method = "zd.Echo/Call";
    o.body = "hello";
  }
  return o;
}

Result run_collecting(const Options& options) {
  Result result;
  Hooks hooks;
  hooks.on_record = [&](const record::RequestRecord& r) {
    result.records.push_back(r);
  };
  result.summary = run(options, hooks);
  return result;
}

Result run_h2(H2ServerOptions server_options, Protocol protocol = Protocol::http2,
              RetryUnprocessed retry = RetryUnprocessed::once) {
  if (protocol == Protocol::grpc) {
    server_options.grpc = Grpc::on;
  }
  H2Server server(server_options);
  Options o = h2_options(server.url(), protocol);
  o.retry_unprocessed = retry;
  return run_collecting(o);
}

size_t index(Outcome o) {
  return static_cast<size_t>(o);
}

// Every request of the run has the one expected class.
void expect_all_h2(const Result& r, Outcome outcome) {
  ASSERT_GT(r.summary.requests, 0u);
  EXPECT_EQ(r.summary.outcomes[index(outcome)], r.summary.requests)
      << "expected every request to be " << record::to_string(outcome) << "; first was "
      << record::to_string(r.records.front().outcome) << " (" << r.records.front().error << ")";
  EXPECT_EQ(r.summary.failed, outcome == Outcome::ok ? 0 : r.summary.requests);
  ASSERT_EQ(r.records.size(), r.summary.requests);
  for (const auto& rec : r.records) {
    ASSERT_TRUE(rec.h2) << "an HTTP/2 record carries its HTTP/2 fields";
  }
}

// Every request has one of `outcomes` (a server that closes a socket with unread bytes makes the
// kernel send a reset, so a close races a reset), the first of them at least once.
void expect_only(const Result& r, std::initializer_list<Outcome> outcomes) {
  ASSERT_GT(r.summary.requests, 0u);
  uint64_t sum = 0;
  for (Outcome o : outcomes) {
    sum += r.summary.outcomes[index(o)];
  }
  EXPECT_EQ(sum, r.summary.requests)
      << "first was " << record::to_string(r.records.front().outcome);
  EXPECT_GT(r.summary.outcomes[index(*outcomes.begin())], 0u);
  ASSERT_EQ(r.records.size(), r.summary.requests);
}

TEST(Http2, HealthyServerIsAllOkOnMultiplexedConnections) {
  H2Server server({});
  Result r = run_collecting(h2_options(server.url()));
  expect_all_h2(r, Outcome::ok);
  std::set<uint64_t> seqs;
  for (const auto& rec : r.records) {
    EXPECT_EQ(rec.status, 200);
    EXPECT_EQ(rec.backend, "pod-0");
    EXPECT_EQ(rec.h2->proto, record::Proto::h2);
    EXPECT_EQ(rec.h2->stream % 2, 1u) << "client streams are odd";
    EXPECT_GT(rec.h2->conn, 0u);
    EXPECT_EQ(rec.h2->attempts, 1u);
    EXPECT_FALSE(rec.h2->goaway);
    EXPECT_FALSE(rec.h2->grpc_status);
    seqs.insert(rec.seq);
  }
  EXPECT_EQ(seqs.size(), r.records.size());
  EXPECT_LE(r.summary.connections_opened, 2u);
  EXPECT_EQ(r.records.back().connection, record::Connection::reused);
  EXPECT_EQ(server.requests(), r.summary.requests);
}

TEST(Grpc, HealthyServerIsAllOk) {
  Result r = run_h2({}, Protocol::grpc);
  expect_all_h2(r, Outcome::ok);
  EXPECT_EQ(r.summary.h2.grpc_status[0], r.summary.requests);
  for (const auto& rec : r.records) {
    EXPECT_EQ(rec.h2->proto, record::Proto::grpc);
    EXPECT_EQ(rec.h2->grpc_status, 0);
  }
}

TEST(Grpc, StatusClasses) {
  auto with_status = [](int code) {
    return run_h2({.mode = H2Mode::grpc_status, .code = code}, Protocol::grpc);
  };
  Result unavailable = with_status(14);
  expect_all_h2(unavailable, Outcome::grpc_unavailable);
  EXPECT_EQ(unavailable.records.front().h2->grpc_message, "boom here") << "percent-decoded";
  EXPECT_EQ(unavailable.records.front().h2->grpc_status, 14);
  expect_all_h2(with_status(4), Outcome::grpc_deadline_exceeded);
  expect_all_h2(with_status(1), Outcome::grpc_cancelled);
  expect_all_h2(with_status(13), Outcome::grpc_internal);
  expect_all_h2(with_status(5), Outcome::grpc_other);
}

TEST(Grpc, OkGrpcStatusDecidesSuccess) {
  H2Server server({.mode = H2Mode::grpc_status, .grpc = Grpc::on, .code = 5});
  Options o = h2_options(server.url(), Protocol::grpc);
  o.ok_grpc_status = {0, 5};
  expect_all_h2(run_collecting(o), Outcome::ok);
}

TEST(Grpc, MalformedAnswersAreProtocolErrors) {
  expect_all_h2(run_h2({.mode = H2Mode::no_trailers}, Protocol::grpc), Outcome::protocol_error);
  expect_all_h2(run_h2({.mode = H2Mode::wrong_content_type}, Protocol::grpc),
                Outcome::protocol_error);
}

TEST(Http2, GracefulDoubleGoawayLosesNothing) {
  H2Server server({.mode = H2Mode::goaway_graceful, .after = 3, .delay = 60ms});
  Options o = h2_options(server.url());
  o.rate = 100;
  o.duration = 400ms;
  o.connections = 1;
  o.timeout = 2s;
  Result r = run_collecting(o);
  expect_all_h2(r, Outcome::ok);
  EXPECT_GE(r.summary.h2.goaways[0], 2u) << "the heads-up and the final GOAWAY";
  EXPECT_GE(r.summary.connections_opened, 2u) << "a new connection after the drain";
  EXPECT_EQ(r.summary.h2.closed_without_goaway, 0u);
}

TEST(Http2, SingleGoawayLeavesRequestsUnprocessedAndTheyAreResentOnce) {
  Result r = run_h2({.mode = H2Mode::goaway_single, .after = 2});
  expect_all_h2(r, Outcome::ok);
  EXPECT_GT(r.summary.h2.unprocessed, 0u);
  EXPECT_EQ(r.summary.h2.resent_ok, r.summary.h2.unprocessed);
  size_t resent = 0;
  for (const auto& rec : r.records) {
    if (rec.h2->attempts == 2) {
      ++resent;
      ASSERT_TRUE(rec.h2->first_attempt);
      EXPECT_EQ(rec.h2->first_attempt->outcome, Outcome::goaway_unprocessed);
      EXPECT_NE(rec.h2->first_attempt->conn, rec.h2->conn) << "resent on another connection";
    }
  }
  EXPECT_EQ(resent, r.summary.h2.unprocessed);
}

TEST(Http2, SingleGoawayWithoutResendFails) {
  Result r =
      run_h2({.mode = H2Mode::goaway_single, .after = 2}, Protocol::http2, RetryUnprocessed::never);
  EXPECT_GT(r.summary.outcomes[index(Outcome::goaway_unprocessed)], 0u);
  EXPECT_EQ(r.summary.outcomes[index(Outcome::goaway_unprocessed)] + r.summary.ok,
            r.summary.requests);
  EXPECT_EQ(r.summary.h2.unprocessed, 0u);
  for (const auto& rec : r.records) {
    EXPECT_EQ(rec.h2->attempts, 1u);
    if (rec.outcome == Outcome::goaway_unprocessed) {
      ASSERT_TRUE(rec.h2->goaway);
      EXPECT_LT(rec.h2->goaway->last_stream_id, rec.h2->stream);
    }
  }
}

TEST(Http2, GoawayWithErrorThenClose) {
  Result r = run_h2({.mode = H2Mode::goaway_error});
  expect_only(r, {Outcome::closed_before_response, Outcome::reset_before_response});
  const auto& goaway = r.records.front().h2->goaway;
  ASSERT_TRUE(goaway);
  EXPECT_EQ(goaway->error, 2u) << "INTERNAL_ERROR";
  EXPECT_EQ(goaway->debug, "Cancelling all calls");
  // One GOAWAY per connection: a request sent before the previous one's GOAWAY arrived shares it.
  EXPECT_GE(r.summary.h2.goaways[2], r.summary.requests / 2);
  EXPECT_LE(r.summary.h2.goaways[2], r.summary.requests);
  EXPECT_EQ(r.summary.h2.closed_without_goaway, 0u);
}

TEST(Http2, RefusedStreamIsResentOnceThenFails) {
  Result r = run_h2({.mode = H2Mode::refuse});
  expect_all_h2(r, Outcome::refused_stream);
  EXPECT_EQ(r.summary.h2.unprocessed, r.summary.requests);
  EXPECT_EQ(r.summary.h2.resend_failed, r.summary.requests);
  EXPECT_EQ(r.records.front().h2->attempts, 2u);
  EXPECT_EQ(r.records.front().h2->rst, 7u);
  Result naive = run_h2({.mode = H2Mode::refuse}, Protocol::http2, RetryUnprocessed::never);
  expect_all_h2(naive, Outcome::refused_stream);
  EXPECT_EQ(naive.records.front().h2->attempts, 1u);
}

// Closed loop on one connection with room for streams: each refused request's resend and the new
// requests leave in one dispatch round. Every planned request is recorded once, as itself (a
// resend's fields once leaked into the next new request, which then popped an empty queue).
TEST(Http2, NewRequestsBesideAResendKeepTheirOwnSeq) {
  H2Server server({.mode = H2Mode::refuse});
  Options o = h2_options(server.url());
  o.rate = 0;
  o.duration = 10s;
  o.max_requests = 40;
  o.connections = 1;
  Result r = run_collecting(o);
  EXPECT_EQ(r.summary.requests, 40u);
  std::vector<int> seen(40, 0);
  for (const record::RequestRecord& rec : r.records) {
    ASSERT_LT(rec.seq, 40u);
    ++seen[rec.seq];
    EXPECT_EQ(rec.h2->attempts, 2u) << "seq " << rec.seq;
  }
  for (size_t seq = 0; seq < seen.size(); ++seq) {
    EXPECT_EQ(seen[seq], 1) << "seq " << seq;
  }
}

TEST(Http2, OtherResetCodesAreStreamResets) {
  Result cancel = run_h2({.mode = H2Mode::rst, .code = 8});
  expect_all_h2(cancel, Outcome::stream_reset);
  EXPECT_EQ(cancel.records.front().h2->rst, 8u);
  EXPECT_EQ(cancel.records.front().error, "RST_STREAM CANCEL");
  EXPECT_EQ(cancel.summary.h2.rst_streams[8], cancel.summary.requests);
  expect_all_h2(run_h2({.mode = H2Mode::rst, .code = 2}), Outcome::stream_reset);
}

TEST(Http2, CloseWithoutGoaway) {
  Result r = run_h2({.mode = H2Mode::close_no_goaway});
  expect_only(r, {Outcome::closed_before_response, Outcome::reset_before_response});
  EXPECT_GT(r.summary.h2.closed_without_goaway, 0u);
  EXPECT_FALSE(r.records.front().h2->goaway);
}

TEST(Http2, CloseMidStreamIsTruncated) {
  // A request sent on the connection before its close was seen has no byte of its own.
  Result r = run_h2({.mode = H2Mode::close_mid_stream});
  expect_only(r, {Outcome::truncated_response, Outcome::closed_before_response,
                  Outcome::reset_during_response, Outcome::reset_before_response});
  // Each connection truncates the answer it started; how many more requests a connection took
  // before its close was seen depends on the machine's speed, so only this is exact: some answer
  // was cut, and every request that got a byte of its answer is counted as cut.
  EXPECT_GT(r.summary.outcomes[index(Outcome::truncated_response)], 0u);
  for (const record::RequestRecord& rec : r.records) {
    if (rec.first_byte) {
      EXPECT_TRUE(rec.outcome == Outcome::truncated_response
                  || rec.outcome == Outcome::reset_during_response)
          << "seq " << rec.seq << ": " << record::to_string(rec.outcome);
    }
  }
}

TEST(Http2, StallTimesOutAndKeepsTheConnection) {
  Result r = run_h2({.mode = H2Mode::stall});
  expect_all_h2(r, Outcome::timeout);
  EXPECT_LE(r.summary.connections_opened, 2u) << "a timeout cancels the stream, not the connection";
}

TEST(Http2, HostileFramesAreProtocolErrors) {
  expect_all_h2(run_h2({.mode = H2Mode::huge_headers}), Outcome::protocol_error);
  Result garbage = run_h2({.mode = H2Mode::garbage_frames});
  expect_all_h2(garbage, Outcome::protocol_error);
  EXPECT_NE(garbage.records.front().error.find("PROTOCOL_ERROR"), std::string::npos)
      << garbage.records.front().error;
}

TEST(Http2, NeverMoreStreamsThanTheServerAllows) {
  H2Server server({.mode = H2Mode::max_streams, .code = 2, .delay = 50ms});
  Options o = h2_options(server.url());
  o.connections = 1;
  o.streams = 50;
  o.rate = 100;
  o.duration = 300ms;
  o.timeout = 5s;
  Result r = run_collecting(o);
  expect_all_h2(r, Outcome::ok);
  EXPECT_LE(server.max_concurrent(), 2u);
  EXPECT_GT(r.summary.late, 0u) << "requests wait in the engine, counted late";
}

TEST(Http2, RejectsBadInput) {
  Options o = h2_options("http://127.0.0.1:1/", Protocol::grpc);
  for (const char* method : {"", "NoMethod", "a/b/c", "pkg.Svc/Me thod"}) {
    o.grpc_method = method;
    EXPECT_THROW(run(o, {}), Error) << method;
  }
  o = h2_options("http://127.0.0.1:1/");
  o.streams = 0;
  EXPECT_THROW(run(o, {}), Error);
}

// A server that answers the client preface with seeded random bytes, some behind a valid
// SETTINGS frame so that they reach the frame parser: the engine must classify every request
// and end the run, whatever comes.
TEST(Http2, HostileBytesNeverCrashOrHang) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 64), 0);
  socklen_t size = sizeof address;
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size);
  std::atomic<bool> stop{false};
  std::atomic<uint32_t> seed{1};
  std::thread server([&] {
    while (!stop) {
      pollfd p{listener, POLLIN, 0};
      if (::poll(&p, 1, 5) <= 0) {
        continue;
      }
      int fd = ::accept(listener, nullptr, nullptr);
      std::mt19937 random(seed++);
      char in[4096];
      (void)::recv(fd, in, sizeof in, 0);
      std::string out;
      if (random() % 2 == 0) {
        out.assign("\0\0\0\4\0\0\0\0\0", 9);  // an empty SETTINGS frame
      }
      size_t n = random() % 300;
      for (size_t i = 0; i < n; ++i) {
        out.push_back(static_cast<char>(random() % 4 == 0 ? random() % 10 : random()));
      }
      (void)::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
      ::usleep(1000);
      ::close(fd);
    }
  });
  std::string url = "http://127.0.0.1:" + std::to_string(ntohs(address.sin_port)) + "/";
  for (int round = 0; round < 40; ++round) {
    Options o = h2_options(url, round % 2 ? Protocol::grpc : Protocol::http2);
    o.rate = 0;
    o.max_requests = 3;
    o.duration = 10s;
    o.connections = 1;
    Result r = run_collecting(o);
    EXPECT_EQ(r.summary.requests, 3u) << "round " << round;
    EXPECT_EQ(r.records.size(), 3u);
    EXPECT_LT(r.summary.elapsed_s, 5) << "round " << round;
  }
  stop = true;
  server.join();
  ::close(listener);
}

// Counts the HEADERS frames in the bytes `recv` returned, call by call, on one h2c connection:
// after the preface, an empty SETTINGS, then reads until `requests` HEADERS came, and closes.
std::vector<int> headers_per_read(int listener, int requests) {
  std::vector<int> counts;
  int fd = ::accept(listener, nullptr, nullptr);
  (void)::send(fd, "\0\0\0\4\0\0\0\0\0", 9, MSG_NOSIGNAL);  // an empty SETTINGS frame
  std::string in;
  size_t parsed = 24;  // the client preface
  int total = 0;
  char buffer[65536];
  while (total < requests) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) {
      break;
    }
    in.append(buffer, static_cast<size_t>(n));
    int count = 0;
    while (in.size() >= parsed + 9) {
      auto byte = [&](size_t i) {
        return static_cast<uint8_t>(in[parsed + i]);
      };
      size_t length = (size_t{byte(0)} << 16) | (size_t{byte(1)} << 8) | byte(2);
      if (in.size() < parsed + 9 + length) {
        break;
      }
      count += byte(3) == 1 ? 1 : 0;  // type 1: HEADERS
      parsed += 9 + length;
    }
    counts.push_back(count);
    total += count;
  }
  ::close(fd);
  return counts;
}

// The requests a worker starts together (here the 31 the server's SETTINGS let in after the
// first) leave in one write, not one write per request: the server reads them in one call.
TEST(Http2, RequestsStartedTogetherLeaveInOneWrite) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  socklen_t size = sizeof address;
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size);
  std::vector<int> counts;
  std::thread server([&] { counts = headers_per_read(listener, 32); });
  Options o = h2_options("http://127.0.0.1:" + std::to_string(ntohs(address.sin_port)) + "/");
  o.rate = 0;
  o.max_requests = 32;
  o.duration = 10s;
  o.connections = 1;
  o.streams = 32;
  Result r = run_collecting(o);
  server.join();
  ::close(listener);
  EXPECT_EQ(r.summary.requests, 32u);
  ASSERT_FALSE(counts.empty());
  EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), 0), 32);
  // At least 31: a server thread descheduled before its first read gets the first one too.
  EXPECT_GE(*std::max_element(counts.begin(), counts.end()), 31)
      << "reads: " << ::testing::PrintToString(counts);
}

}  // namespace
}  // namespace zerodrop::load
