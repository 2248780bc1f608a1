#include "kubeapi/selector.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace zerodrop::kubeapi {
namespace {

using nlohmann::json;

const json kPod = {{"metadata", {{"name", "pod-1"}, {"labels", {{"app", "web"}, {"tier", "a"}}}}},
                   {"spec", {{"nodeName", "node-2"}}}};

TEST(Selector, LabelEqualityAndSets) {
  EXPECT_TRUE(Selector::parse("app=web", "").matches(kPod));
  EXPECT_TRUE(Selector::parse("app==web,tier!=b", "").matches(kPod));
  EXPECT_FALSE(Selector::parse("app=db", "").matches(kPod));
  EXPECT_TRUE(Selector::parse("tier in (a,b)", "").matches(kPod));
  EXPECT_FALSE(Selector::parse("tier notin (a)", "").matches(kPod));
  EXPECT_TRUE(Selector::parse("app", "").matches(kPod));
  EXPECT_FALSE(Selector::parse("!app", "").matches(kPod));
  EXPECT_FALSE(Selector::parse("missing=x", "").matches(kPod));
}

TEST(Selector, FieldsAreDottedPaths) {
  EXPECT_TRUE(Selector::parse("", "metadata.name=pod-1").matches(kPod));
  EXPECT_FALSE(Selector::parse("", "metadata.name=pod-2").matches(kPod));
  EXPECT_TRUE(Selector::parse("", "spec.nodeName!=node-1").matches(kPod));
  EXPECT_TRUE(Selector::parse("", "").matches(kPod));
}

TEST(Selector, RefusesWhatItCannotRead) {
  EXPECT_THROW(Selector::parse("", "metadata.name"), Error);
  EXPECT_THROW(Selector::parse("tier in a", ""), Error);
}

}  // namespace
}  // namespace zerodrop::kubeapi
