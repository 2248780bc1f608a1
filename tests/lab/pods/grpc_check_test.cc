#include "lab/pods/grpc_check.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <thread>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "base/error.h"
#include "base/listen.h"
#include "base/subprocess.h"
#include "lab/lab.h"
#include "testing/h2_server.h"

namespace zerodrop::lab {
namespace {

using namespace std::chrono_literals;
using testing::H2Mode;
using testing::H2Server;
using testing::H2ServerOptions;

struct Result {
  bool ok = false;
  std::string why;
};

// One probe, run to its end.
Result probe(const std::string& text, uint16_t port, Duration timeout = 2s) {
  boost::asio::io_context io;
  std::optional<Result> result;
  ProbeSpec spec = parse_probe(text, "--readiness");
  auto check = Check::start(io, spec, CheckTarget{"127.0.0.1", port, {}, ""}, timeout,
                            [&](bool ok, std::string why) {
                              result = Result{ok, why};
                            });
  io.run();
  EXPECT_TRUE(result.has_value());
  return result.value_or(Result{false, "no result"});
}

TEST(GrpcCheck, EncodesTheServiceAsField1) {
  EXPECT_EQ(health_check_request(""), std::string(5, '\0'));
  EXPECT_EQ(health_check_request("zd.Echo"), std::string("\0\0\0\0\x09\x0a\x07zd.Echo", 14));
}

TEST(GrpcCheck, ReadsTheServingStatus) {
  EXPECT_EQ(health_status(std::string("\0\0\0\0\x02\x08\x01", 7)), 1);
  EXPECT_EQ(health_status(std::string("\0\0\0\0\x02\x08\x02", 7)), 2);
  EXPECT_EQ(health_status(std::string(5, '\0')), 0);  // proto3 leaves UNKNOWN out
  // An unknown length-delimited field is skipped.
  EXPECT_EQ(health_status(std::string("\0\0\0\0\x05\x12\x01x\x08\x01", 10)), 1);
  EXPECT_EQ(health_status(std::string("\0\0\0\0\x03\x08\x01", 7)), std::nullopt);  // short
  EXPECT_EQ(health_status(std::string("\1\0\0\0\x02\x08\x01", 7)), std::nullopt);  // compressed
  EXPECT_EQ(health_status("ok"), std::nullopt);
}

TEST(GrpcCheck, ParsesTheProbeFlag) {
  EXPECT_EQ(parse_probe("grpc", "--readiness").kind, ProbeSpec::Kind::grpc);
  EXPECT_EQ(parse_probe("grpc:zd.Echo", "--readiness").service, "zd.Echo");
  EXPECT_EQ(parse_probe("grpc:zd.Echo", "--readiness").describe(), "grpc:zd.Echo");
  EXPECT_THROW(parse_probe("grpc:", "--readiness"), Error);
}

TEST(GrpcCheck, FailsOnAClosedPort) {
  uint16_t port = pick_free_port();
  Result r = probe("grpc", port);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.why.find("refused"), std::string::npos) << r.why;
}

TEST(GrpcCheck, PassesOnlyOnServing) {
  // h2-server's gRPC answer is an empty message: status UNKNOWN, which kubelet fails.
  H2Server unknown(H2ServerOptions{.mode = H2Mode::ok, .grpc = testing::Grpc::on});
  Result r = probe("grpc", unknown.port());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.why, "health status UNKNOWN");
  EXPECT_EQ(unknown.connections(), 1u);
}

TEST(GrpcCheck, FailsOnAGrpcErrorAndOnAStall) {
  H2Server unimplemented(
      H2ServerOptions{.mode = H2Mode::grpc_status, .grpc = testing::Grpc::on, .code = 12});
  Result r = probe("grpc", unimplemented.port());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.why.rfind("grpc-status 12 UNIMPLEMENTED", 0), 0u) << r.why;
  H2Server stall(H2ServerOptions{.mode = H2Mode::stall, .grpc = testing::Grpc::on});
  r = probe("grpc", stall.port(), 200ms);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.why, "timed out after 200ms");
}

// Against gRPC's own server (python3-grpcio): SERVING, NOT_FOUND for an unknown service, and
// NOT_SERVING once it is told to stop (it keeps serving through its --delay).
TEST(GrpcCheck, SpeaksToGrpcPython) {
  if (::access("/usr/bin/python3", X_OK) != 0
      || std::system("/usr/bin/python3 -c 'import grpc' 2>/dev/null") != 0) {
    GTEST_SKIP() << "python3-grpcio is not installed";
  }
  uint16_t port = pick_free_port();
  Subprocess server =
      Subprocess::spawn({{"/usr/bin/python3", ZERODROP_SOURCE_DIR "/tests/testing/grpc_server.py",
                          "--port", std::to_string(port), "--delay", "30s"}});
  Result r;
  for (int i = 0; i < 200 && !r.ok; ++i) {  // until it listens
    r = probe("grpc", port);
    if (!r.ok) {
      std::this_thread::sleep_for(50ms);
    }
  }
  ASSERT_TRUE(r.ok) << r.why;
  EXPECT_TRUE(probe("grpc:zd.Echo", port).ok);
  r = probe("grpc:other", port);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.why.rfind("grpc-status 5 NOT_FOUND", 0), 0u) << r.why;
  server.send_signal(SIGTERM);
  for (int i = 0; i < 200 && r.why != "health status NOT_SERVING"; ++i) {
    std::this_thread::sleep_for(20ms);
    r = probe("grpc", port);
  }
  EXPECT_EQ(r.why, "health status NOT_SERVING");
}

}  // namespace
}  // namespace zerodrop::lab
