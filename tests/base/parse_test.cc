#include "base/parse.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop {
namespace {

TEST(Parse, NumbersWithClearErrors) {
  EXPECT_DOUBLE_EQ(parse_number("1000", "--rate"), 1000);
  EXPECT_DOUBLE_EQ(parse_number("0.5", "--rate"), 0.5);
  try {
    parse_number("x", "--rate");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--rate: expected a number, got 'x'");
  }
  EXPECT_THROW(parse_number("1x", "--rate"), Error);
  EXPECT_THROW(parse_integer("1.5", "--n", 0, 10), Error);
  EXPECT_THROW(parse_integer("11", "--n", 0, 10), Error);
  EXPECT_EQ(parse_integer("7", "--n", 0, 10), 7);
}

TEST(Parse, IntOrPercentRoundsLikeKubernetes) {
  // maxSurge 25% of 3 rounds up to 1; maxUnavailable 25% of 3 rounds down to 0.
  EXPECT_EQ(parse_int_or_percent("25%", "s", 3, Round::up), 1);
  EXPECT_EQ(parse_int_or_percent("25%", "u", 3, Round::down), 0);
  EXPECT_EQ(parse_int_or_percent("50%", "u", 10, Round::down), 5);
  EXPECT_EQ(parse_int_or_percent("2", "u", 10, Round::down), 2);
  EXPECT_THROW(parse_int_or_percent("150%", "u", 10, Round::down), Error);
}

TEST(ParseShare, ReadsAPercentageAsAFraction) {
  EXPECT_DOUBLE_EQ(parse_share("50%", "--fresh-share"), 0.5);
  EXPECT_DOUBLE_EQ(parse_share("12.5%", "--fresh-share"), 0.125);
  EXPECT_DOUBLE_EQ(parse_share("0%", "--fresh-share"), 0);
  EXPECT_DOUBLE_EQ(parse_share("100%", "--fresh-share"), 1);
  for (const char* bad : {"50", "0.5", "101%", "-1%", "%", "x%", ""}) {
    EXPECT_THROW(parse_share(bad, "--fresh-share"), Error) << bad;
  }
  try {
    parse_share("0.5", "--fresh-share");
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--fresh-share: expected a percentage from 0% to 100%, got '0.5'");
  }
}

// With a default host the port alone will do; without one (the lab's --router-only) a host is
// required. IPv6 literals lose their brackets.
TEST(ParseHostPort, AcceptsPortHostPortAndIpv6) {
  struct Case {
    const char* text;
    const char* flag;
    const char* default_host;
    const char* host;
    int port;
  };

  for (const Case& c : {Case{"8081", "--ready-port", "0.0.0.0", "0.0.0.0", 8081},
                        Case{":8080", "--listen", "0.0.0.0", "0.0.0.0", 8080},
                        Case{"127.0.0.1:0", "--listen", "0.0.0.0", "127.0.0.1", 0},
                        Case{"[::1]:9000", "--to", "127.0.0.1", "::1", 9000},
                        Case{"[::1]:9000", "--backend", "", "::1", 9000},
                        Case{"127.0.0.9:0", "--listen", "", "127.0.0.9", 0}}) {
    HostPort a = parse_host_port(c.text, c.flag, c.default_host);
    EXPECT_EQ(a.host, c.host) << c.text;
    EXPECT_EQ(a.port, c.port) << c.text;
  }
}

// Each rejection starts with the flag's name: --listen with a default host, --backend without.
TEST(ParseHostPort, RejectsWhatCannotBeDialledNamingTheFlag) {
  struct Case {
    const char* text;
    const char* default_host;
  };

  for (const Case& c :
       {Case{"", "0.0.0.0"}, Case{"x", "0.0.0.0"}, Case{"127.0.0.1:", "0.0.0.0"},
        Case{"1:99999", "0.0.0.0"}, Case{"-1", "0.0.0.0"}, Case{"8081", ""}, Case{":8081", ""},
        Case{"[]:80", ""}, Case{"x:", ""}, Case{"x:65536", ""}, Case{"x:-1", ""}, Case{"", ""}}) {
    const bool with_default = *c.default_host != '\0';
    const std::string flag = with_default ? "--listen" : "--backend";
    try {
      parse_host_port(c.text, flag, c.default_host);
      ADD_FAILURE() << "accepted '" << c.text << "' for " << flag;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(with_default ? flag : flag + ": ", 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace zerodrop
