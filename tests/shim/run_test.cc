#include "shim/run.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "shim/ready_server.h"

namespace zerodrop::shim {
namespace {

TEST(ParseHttpUrl, SplitsHostPortAndTarget) {
  HttpUrl url = parse_http_url("http://127.0.0.1:8080/ready?deep=1", "--app-ready");
  EXPECT_EQ(url.host, "127.0.0.1");
  EXPECT_EQ(url.port, "8080");
  EXPECT_EQ(url.target, "/ready?deep=1");
  url = parse_http_url("http://localhost", "--app-ready");
  EXPECT_EQ(url.port, "80");
  EXPECT_EQ(url.target, "/");
  url = parse_http_url("http://[::1]:81/r", "--app-ready");
  EXPECT_EQ(url.host, "::1");
  url = parse_http_url("HTTP://App:8081", "--app-ready");
  EXPECT_EQ(url.host, "App");
  EXPECT_EQ(url.port, "8081");
}

TEST(ParseHttpUrl, RejectsOtherSchemes) {
  EXPECT_THROW(parse_http_url("https://x/", "--app-ready"), Error);
  EXPECT_THROW(parse_http_url("127.0.0.1:8080/ready", "--app-ready"), Error);
  EXPECT_THROW(parse_http_url("", "--app-ready"), Error);
}

// A port out of range is an error at the flag, not a readiness that answers 503 for ever.
TEST(ParseHttpUrl, RejectsWhatCannotBeDialled) {
  for (const char* bad :
       {"http://x:99999/ready", "http://x:0/", "http:///ready", "http://u:p@x/"}) {
    try {
      parse_http_url(bad, "--app-ready");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--app-ready: ", 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace zerodrop::shim
