#include "lab/endpoint_table.h"

#include <gtest/gtest.h>

namespace zerodrop::lab {
namespace {

EndpointChange change(const std::string& pod, bool ready, bool serving, bool terminating) {
  return {{pod, "127.0.0.1", 80, {ready, serving, terminating}}, false};
}

std::vector<std::string> pods(const EndpointTable& table) {
  std::vector<std::string> out;
  for (const Endpoint* e : table.usable()) {
    out.push_back(e->pod);
  }
  return out;
}

TEST(EndpointTable, UsesReadyEndpointsOnly) {
  EndpointTable table;
  table.apply(change("a", true, true, false));
  table.apply(change("b", false, false, false));  // starting: not ready yet
  table.apply(change("c", false, true, true));    // terminating but serving
  EXPECT_EQ(pods(table), (std::vector<std::string>{"a"}));
}

TEST(EndpointTable, FallsBackToServingTerminatingOnlyWhenNoneIsReady) {
  EndpointTable table;
  table.apply(change("a", false, true, true));
  table.apply(change("b", false, false, true));  // terminating and failing readiness: never
  EXPECT_EQ(pods(table), (std::vector<std::string>{"a"}));
  table.apply(change("c", true, true, false));
  EXPECT_EQ(pods(table), (std::vector<std::string>{"c"}));
}

TEST(EndpointTable, StopsUsingAPodAtTheFirstTerminatingUpdate) {
  EndpointTable table;
  table.apply(change("a", true, true, false));
  table.apply(change("b", true, true, false));
  table.apply(change("a", false, true, true));
  EXPECT_EQ(pods(table), (std::vector<std::string>{"b"}));
  table.apply({{"b", "", 0, {}}, true});
  EXPECT_EQ(pods(table), (std::vector<std::string>{"a"}));
  EXPECT_EQ(table.size(), 1u);
}

}  // namespace
}  // namespace zerodrop::lab
