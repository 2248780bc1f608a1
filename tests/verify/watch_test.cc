#include "verify/watch.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop::verify {
namespace {

TEST(LineDecoder, JoinsALineSplitAcrossChunks) {
  LineDecoder decoder;
  EXPECT_TRUE(decoder.feed(R"({"type":"ADDED","obj)").empty());
  auto lines = decoder.feed("ect\":{}}\n{\"type\":\"BOOK");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], R"({"type":"ADDED","object":{}})");
  lines = decoder.feed("MARK\",\"object\":{}}\n\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], R"({"type":"BOOKMARK","object":{}})");
  EXPECT_EQ(lines[1], "");
}

TEST(LineDecoder, RefusesALineBeyondTheBound) {
  LineDecoder decoder;
  std::string big(LineDecoder::kMaxLine + 1, 'x');
  EXPECT_THROW(decoder.feed(big), Error);
}

TEST(ParseWatchLine, ReadsEveryTypeAndItsObject) {
  auto added = parse_watch_line(
      R"({"type":"MODIFIED","object":{"metadata":{"name":"web-1","resourceVersion":"42"}}})");
  ASSERT_TRUE(added);
  EXPECT_EQ(added->type, WatchType::modified);
  EXPECT_EQ(resource_version(added->object), "42");
  auto bookmark =
      parse_watch_line(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"50"}}})");
  ASSERT_TRUE(bookmark);
  EXPECT_EQ(bookmark->type, WatchType::bookmark);
  auto gone = parse_watch_line(
      R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})");
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->type, WatchType::error);
  EXPECT_EQ(gone->object.value("code", 0), 410);
}

TEST(ParseWatchLine, SkipsWhatIsNotAWatchEvent) {
  EXPECT_FALSE(parse_watch_line(""));
  EXPECT_FALSE(parse_watch_line("not json"));
  EXPECT_FALSE(parse_watch_line(R"({"type":"ADDED"})"));
  EXPECT_FALSE(parse_watch_line(R"({"type":"RENAMED","object":{}})"));
  EXPECT_EQ(resource_version(nlohmann::json::object()), "");
}

}  // namespace
}  // namespace zerodrop::verify
