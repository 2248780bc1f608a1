#include "lab/pods/spec.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop::lab {
namespace {

using namespace std::chrono_literals;

TEST(Spec, ParsesPrestopForms) {
  EXPECT_EQ(parse_hook("sleep:1.5s", "--prestop").sleep, 1500ms);
  EXPECT_EQ(parse_hook("sleep:10", "--prestop").sleep, 10s);
  HookSpec exec = parse_hook("exec:'sh -c \"sleep 1\"'", "--prestop");
  ASSERT_EQ(exec.kind, HookSpec::Kind::exec);
  EXPECT_EQ(exec.command, (std::vector<std::string>{"sh", "-c", "sleep 1"}));
  EXPECT_EQ(parse_hook("http:/drain", "--prestop").path, "/drain");
  EXPECT_EQ(parse_hook("none", "--prestop").kind, HookSpec::Kind::none);
  EXPECT_EQ(parse_hook("sleep:2s", "--prestop").describe(), "sleep:2s");
}

TEST(Spec, RejectsBadPrestopWithTheFlagName) {
  try {
    parse_hook("wait:3", "--prestop");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "--prestop: expected none, sleep:DURATION, exec:'command args' or http:/path, got "
              "'wait:3'");
  }
  EXPECT_THROW(parse_hook("sleep:x", "--prestop"), Error);
  EXPECT_THROW(parse_hook("exec:'unterminated", "--prestop"), Error);
  EXPECT_THROW(parse_hook("http:nopath", "--prestop"), Error);
}

TEST(Spec, ParsesProbeForms) {
  EXPECT_EQ(parse_probe("http:/readyz", "--readiness").path, "/readyz");
  EXPECT_EQ(parse_probe("tcp", "--readiness").kind, ProbeSpec::Kind::tcp);
  EXPECT_EQ(parse_probe("none", "--readiness").kind, ProbeSpec::Kind::none);
  EXPECT_EQ(parse_probe("exec:'test -f /tmp/x'", "--readiness").command.size(), 3u);
  EXPECT_THROW(parse_probe("grpc:", "--readiness"), Error);
}

TEST(Spec, ExpandsTheCommandTemplate) {
  auto argv = expand_template({"server", "--listen={ip}:{port}", "--id", "{name}"}, "127.1.0.2",
                              8080, "web-1");
  EXPECT_EQ(argv, (std::vector<std::string>{"server", "--listen=127.1.0.2:8080", "--id", "web-1"}));
}

}  // namespace
}  // namespace zerodrop::lab
