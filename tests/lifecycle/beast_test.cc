#include "zerodrop/lifecycle/beast.h"

#include <gtest/gtest.h>

namespace zerodrop::lifecycle {
namespace {

namespace http = boost::beast::http;
using Request = http::request<http::string_body>;

const Clock::time_point t0{std::chrono::seconds(1000)};

Request get(const char* target) {
  Request request(http::verb::get, target, 11);
  request.keep_alive(true);
  return request;
}

TEST(AnswerProbe, ReadinessFollowsTheState) {
  Shutdown shutdown;
  auto ready = answer_probe(shutdown, get("/readyz"));
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->result(), http::status::ok);
  EXPECT_TRUE(ready->keep_alive());
  shutdown.begin(t0);
  auto unready = answer_probe(shutdown, get("/readyz?verbose=1"));
  ASSERT_TRUE(unready);
  EXPECT_EQ(unready->result(), http::status::service_unavailable);
  EXPECT_FALSE(unready->keep_alive());
}

TEST(AnswerProbe, LivenessStaysHealthyWhileDraining) {
  Options options;
  options.delay = std::chrono::seconds(1);
  Shutdown shutdown(options);
  Connection open = shutdown.track([] {});
  shutdown.begin(t0);
  shutdown.advance(t0 + std::chrono::seconds(1));
  ASSERT_EQ(shutdown.state(), State::draining);
  auto live = answer_probe(shutdown, get("/healthz"));
  ASSERT_TRUE(live);
  EXPECT_EQ(live->result(), http::status::ok);
}

TEST(AnswerProbe, MetricsAndCustomPaths) {
  Shutdown shutdown;
  Endpoints endpoints{"/ready", "/live", ""};
  EXPECT_FALSE(answer_probe(shutdown, get("/readyz"), endpoints));
  EXPECT_FALSE(answer_probe(shutdown, get("/metrics"), endpoints)) << "metrics disabled";
  auto ready = answer_probe(shutdown, get("/ready"), endpoints);
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->result(), http::status::ok);
  auto metrics = answer_probe(shutdown, get("/metrics"));
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body().find("zerodrop_lifecycle_state{state=\"serving\"} 1"),
            std::string::npos);
  EXPECT_FALSE(answer_probe(shutdown, get("/")));
}

TEST(ApplyKeepAlive, ClosesFromTheSignalOn) {
  Shutdown shutdown;
  Request request = get("/");
  http::response<http::string_body> response;
  EXPECT_TRUE(apply_keep_alive(shutdown, request, response));
  EXPECT_TRUE(response.keep_alive());
  shutdown.begin(t0);
  EXPECT_FALSE(apply_keep_alive(shutdown, request, response));
  EXPECT_EQ(response[http::field::connection], "close");
}

TEST(ApplyKeepAlive, HonoursAClientThatCloses) {
  Shutdown shutdown;
  Request request = get("/");
  request.keep_alive(false);
  http::response<http::string_body> response;
  EXPECT_FALSE(apply_keep_alive(shutdown, request, response));
}

}  // namespace
}  // namespace zerodrop::lifecycle
