#include "http/url.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop::http {
namespace {

TEST(Url, SplitsHostPortAndTarget) {
  Url url = parse_url("http://127.0.0.1:8080/a/b?x=1&y=2");
  EXPECT_EQ(url.host, "127.0.0.1");
  EXPECT_EQ(url.port, 8080);
  EXPECT_EQ(url.target, "/a/b?x=1&y=2");
  EXPECT_EQ(url.host_header, "127.0.0.1:8080");
}

TEST(Url, DefaultsPortAndPath) {
  Url url = parse_url("http://example.test");
  EXPECT_EQ(url.port, 80);
  EXPECT_EQ(url.target, "/");
  EXPECT_EQ(url.host_header, "example.test");
}

TEST(Url, AcceptsIpv6Literals) {
  Url url = parse_url("http://[::1]:9000/");
  EXPECT_EQ(url.host, "::1");
  EXPECT_EQ(url.port, 9000);
  EXPECT_EQ(url.host_header, "[::1]:9000");
}

TEST(Url, HttpsDefaultsToPort443) {
  Url url = parse_url("HTTPS://example.test/x");
  EXPECT_TRUE(url.tls);
  EXPECT_EQ(url.port, 443);
  EXPECT_EQ(url.host_header, "example.test");
  EXPECT_FALSE(parse_url("http://example.test/").tls);
  EXPECT_EQ(parse_url("https://example.test:8443/").port, 8443);
}

TEST(Url, RejectsOtherSchemesNamingThem) {
  try {
    parse_url("ftp://127.0.0.1/");
    FAIL() << "ftp accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported scheme 'ftp'"), std::string::npos);
  }
}

TEST(Url, RejectsMalformedUrls) {
  EXPECT_THROW(parse_url("not a url"), Error);
  EXPECT_THROW(parse_url("127.0.0.1:8080"), Error);
  EXPECT_THROW(parse_url("http:///path"), Error);
  EXPECT_THROW(parse_url("http://host:99999/"), Error);
  EXPECT_THROW(parse_url("http://host:0/"), Error);
}

}  // namespace
}  // namespace zerodrop::http
