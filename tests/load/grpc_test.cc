#include "load/grpc.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop::load {
namespace {

TEST(Grpc, PathAcceptsSlashAndGhzForms) {
  EXPECT_EQ(grpc_path("helloworld.Greeter/SayHello"), "/helloworld.Greeter/SayHello");
  EXPECT_EQ(grpc_path("/helloworld.Greeter/SayHello"), "/helloworld.Greeter/SayHello");
  EXPECT_EQ(grpc_path("helloworld.Greeter.SayHello"), "/helloworld.Greeter/SayHello");
  EXPECT_THROW(grpc_path("Greeter"), Error);
  EXPECT_THROW(grpc_path("a/"), Error);
  EXPECT_THROW(grpc_path("a/b.c"), Error);
}

TEST(Grpc, FrameHasTheLengthPrefix) {
  EXPECT_EQ(grpc_frame("hi"), std::string("\0\0\0\0\2hi", 7));
  EXPECT_EQ(grpc_frame(std::string(300, 'x')).substr(0, 5), std::string("\0\0\0\1\x2c", 5));
}

TEST(Grpc, StatusListsByNameOrNumber) {
  EXPECT_EQ(parse_grpc_statuses("OK,not_found,14"), (std::vector<int>{0, 5, 14}));
  EXPECT_THROW(parse_grpc_statuses("OK,NOPE"), Error);
  EXPECT_THROW(parse_grpc_statuses(""), Error);
}

TEST(Grpc, PercentDecodeIsBounded) {
  std::string out;
  percent_decode("a%20b%zz%2", out, 100);
  EXPECT_EQ(out, "a b%zz%2");
  out.clear();
  percent_decode("abcdef", out, 3);
  EXPECT_EQ(out, "abc");
}

TEST(Grpc, FramingFollowsMessagesAcrossChunks) {
  GrpcFraming f;
  const uint8_t two[] = {0, 0, 0, 0, 2, 'h', 'i', 0, 0, 0, 0, 0};
  f.feed(two, 3);
  EXPECT_FALSE(f.complete());
  f.feed(two + 3, sizeof two - 3);
  EXPECT_TRUE(f.complete());
  const uint8_t bad[] = {7, 0, 0, 0, 0};
  f.reset();
  f.feed(bad, sizeof bad);
  EXPECT_TRUE(f.malformed());
  EXPECT_FALSE(f.complete());
}

TEST(Grpc, StatusClasses) {
  EXPECT_EQ(outcome_of_grpc_status(14), record::Outcome::grpc_unavailable);
  EXPECT_EQ(outcome_of_grpc_status(4), record::Outcome::grpc_deadline_exceeded);
  EXPECT_EQ(outcome_of_grpc_status(1), record::Outcome::grpc_cancelled);
  EXPECT_EQ(outcome_of_grpc_status(13), record::Outcome::grpc_internal);
  EXPECT_EQ(outcome_of_grpc_status(12), record::Outcome::grpc_other);
}

}  // namespace
}  // namespace zerodrop::load
