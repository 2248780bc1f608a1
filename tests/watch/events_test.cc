// The Event watch posts at a rollout's end: reason, message and the core/v1 object.
#include "watch/events.h"

#include <gtest/gtest.h>

namespace zerodrop::watch {
namespace {

RolloutResult result(uint64_t requests, uint64_t failed) {
  RolloutResult r;
  r.key = {"Deployment", "shop", "web"};
  r.folder = "shop.web.20261206T203000Z";
  r.agents = 3;
  r.verdict.requests = requests;
  r.verdict.failed = failed;
  if (failed > 0) {
    r.verdict.holes = {{"deregistration-race", failed - 1}, {"no-drain", 1}};
    r.verdict.fix = "preStop sleep 4 s";
  }
  return r;
}

TEST(EventText, DroppedRequestsNameEachHoleAndTheFix) {
  EventText e = event_text(result(3410, 12));
  EXPECT_EQ(e.reason, "RolloutDroppedRequests");
  EXPECT_TRUE(e.warning);
  EXPECT_EQ(e.message,
            "12 of 3,410 requests failed: deregistration-race 11, no-drain 1; fix: preStop sleep "
            "4 s; run shop.web.20261206T203000Z");
}

TEST(EventText, ACleanRollout) {
  EventText e = event_text(result(3390, 0));
  EXPECT_EQ(e.reason, "RolloutClean");
  EXPECT_FALSE(e.warning);
  EXPECT_EQ(e.message, "0 of 3,390 requests failed; run shop.web.20261206T203000Z");
}

TEST(EventText, PartialUnmeasuredAndLostAgentsSaySo) {
  RolloutResult partial = result(800, 2);
  partial.whole = false;
  EventText p = event_text(partial);
  EXPECT_EQ(p.reason, "RolloutPartial");
  EXPECT_NE(p.message.find("no verdict for the whole rollout"), std::string::npos);
  EXPECT_NE(p.message.find("2 of 800 requests failed"), std::string::npos);
  EXPECT_EQ(verdict_label(partial), "partial");

  EventText u = event_text(result(0, 0));
  EXPECT_EQ(u.reason, "RolloutUnmeasured");
  EXPECT_TRUE(u.warning);

  RolloutResult lost = result(1000, 0);
  lost.agents_lost = 1;
  lost.end = RolloutEnd::failed;
  lost.end_reason = "Progressing False, ProgressDeadlineExceeded";
  EventText l = event_text(lost);
  EXPECT_NE(l.message.find("1 of 3 agents stopped reporting (their silence is not counted)"),
            std::string::npos);
  EXPECT_NE(l.message.find("the rollout ended failed (Progressing False"), std::string::npos);
}

TEST(EventText, Thousands) {
  EXPECT_EQ(thousands(0), "0");
  EXPECT_EQ(thousands(999), "999");
  EXPECT_EQ(thousands(1000), "1,000");
  EXPECT_EQ(thousands(1234567), "1,234,567");
}

TEST(EventObject, ACoreV1EventOnTheWorkload) {
  nlohmann::json deployment = {{"metadata", {{"name", "web"}, {"uid", "u-1"}}}};
  nlohmann::json e =
      event_object(deployment, {"Deployment", "shop", "web"},
                   {"RolloutClean", "0 of 3 requests failed", false}, "2026-12-06T20:30:00Z");
  EXPECT_EQ(e["apiVersion"], "v1");
  EXPECT_EQ(e["kind"], "Event");
  EXPECT_EQ(e["metadata"]["namespace"], "shop");
  EXPECT_TRUE(e["metadata"]["name"].get<std::string>().starts_with("web."));
  EXPECT_EQ(e["involvedObject"]["kind"], "Deployment");
  EXPECT_EQ(e["involvedObject"]["apiVersion"], "apps/v1");
  EXPECT_EQ(e["involvedObject"]["uid"], "u-1");
  EXPECT_EQ(e["type"], "Normal");
  EXPECT_EQ(e["reason"], "RolloutClean");
  EXPECT_EQ(e["source"]["component"], "zerodrop-watch");
  EXPECT_EQ(e["lastTimestamp"], "2026-12-06T20:30:00Z");
}

}  // namespace
}  // namespace zerodrop::watch
