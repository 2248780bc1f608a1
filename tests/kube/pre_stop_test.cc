#include "kube/pre_stop.h"

#include <gtest/gtest.h>

namespace zerodrop::kube {
namespace {

using namespace std::chrono_literals;

Handler exec(std::vector<std::string> argv) {
  Handler h;
  h.kind = HandlerKind::exec;
  h.command = std::move(argv);
  return h;
}

struct DelayCase {
  Handler hook;
  std::optional<Duration> want;  // nullopt: unknown
};

Handler native(int64_t seconds) {
  Handler h;
  h.kind = HandlerKind::sleep;
  h.sleep_seconds = seconds;
  return h;
}

Handler http(std::string path) {
  Handler h;
  h.kind = HandlerKind::http_get;
  h.path = std::move(path);
  return h;
}

TEST(PreStopDelay, ReadsEverySleepAHookCanBe) {
  const DelayCase cases[] = {
      {native(5), 5s},
      {native(0), 0s},
      {exec({"sleep", "5"}), 5s},
      {exec({"/bin/sleep", "2.5"}), 2500ms},
      {exec({"sleep", "1m"}), 60s},
      {exec({"sleep", "1h"}), 3600s},
      {exec({"sh", "-c", "sleep 5s"}), 5s},
      {exec({"/bin/sh", "-c", "sleep 5"}), 5s},
      {exec({"sh", "-c", "sleep 5 && nginx -s quit"}), 5s},
      {exec({"bash", "-ec", "echo bye; sleep 7"}), 7s},
      {exec({"/bin/sh", "-c", "(sleep 3)"}), 3s},
      {exec({"zerodrop", "sleep", "5s"}), 5s},
      {exec({"/usr/local/bin/zerodrop", "sleep", "10"}), 10s},
      {exec({"sleep", "forever"}), std::nullopt},
      {exec({"sh", "-c", "nginx -s quit"}), std::nullopt},
      {exec({"sh", "-c", "nosleep 5"}), std::nullopt},
      {exec({"/wait-shutdown"}), std::nullopt},
      {exec({}), std::nullopt},
      {http("/drain"), std::nullopt},
  };
  for (const DelayCase& c : cases) {
    PreStopDelay d = pre_stop_delay(c.hook);
    EXPECT_EQ(d.delay, c.want) << d.how;
    EXPECT_FALSE(d.how.empty());
  }
}

TEST(PreStopDelay, SaysHowItRead) {
  EXPECT_EQ(pre_stop_delay(native(5)).how, "native sleep 5s");
  EXPECT_EQ(pre_stop_delay(exec({"sleep", "5"})).how, "exec sleep 5");
  EXPECT_EQ(pre_stop_delay(exec({"sh", "-c", "sleep 5s"})).how, "exec sh -c 'sleep 5s'");
  EXPECT_EQ(pre_stop_delay(http("")).how, "httpGet /");
  EXPECT_EQ(pre_stop_delay(exec({"/wait-shutdown"})).how, "exec /wait-shutdown");
}

TEST(PreStopDelay, ShellsAreKnownByName) {
  EXPECT_TRUE(is_shell("/bin/sh"));
  EXPECT_TRUE(is_shell("bash"));
  EXPECT_FALSE(is_shell("/bin/sleep"));
  EXPECT_EQ(program_name("/usr/bin/env"), "env");
}

}  // namespace
}  // namespace zerodrop::kube
