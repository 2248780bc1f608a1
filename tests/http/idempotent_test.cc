#include "http/idempotent.h"

#include <gtest/gtest.h>

namespace zerodrop::http {
namespace {

using boost::beast::http::verb;

TEST(Idempotent, FollowsRfc9110) {
  for (verb v : {verb::get, verb::head, verb::put, verb::delete_, verb::options, verb::trace}) {
    EXPECT_TRUE(idempotent(v)) << boost::beast::http::to_string(v);
  }
  for (verb v : {verb::post, verb::patch, verb::connect, verb::unknown}) {
    EXPECT_FALSE(idempotent(v)) << boost::beast::http::to_string(v);
  }
}

}  // namespace
}  // namespace zerodrop::http
