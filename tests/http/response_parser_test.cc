#include "http/response_parser.h"

#include <array>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace zerodrop::http {
namespace {

using State = ResponseParser::State;

struct Parsed {
  State state = State::incomplete;
  int status = 0;
  bool keep_alive = false;
  std::string captured;
  size_t consumed = 0;
  bool operator==(const Parsed&) const = default;
};

// Feeds `text` in pieces cut at `cuts` the way a connection does: unconsumed bytes are kept and
// fed again with the next piece. Calls finish() if the input ends first (the peer closed).
Parsed parse_pieces(std::string_view text, std::vector<size_t> cuts, ResponseParser& parser,
                    bool eof = true) {
  cuts.push_back(text.size());
  std::string pending;
  Parsed out;
  size_t from = 0;
  for (size_t cut : cuts) {
    pending.append(text.substr(from, cut - from));
    from = cut;
    size_t used = parser.feed(pending);
    EXPECT_LE(used, pending.size());
    out.consumed += used;
    pending.erase(0, used);
    if (parser.state() != State::incomplete) {
      break;
    }
    EXPECT_LE(pending.size(), ParserLimits{}.max_line) << "the caller's buffer must stay bounded";
  }
  out.state = eof && parser.state() == State::incomplete ? parser.finish() : parser.state();
  out.status = parser.status();
  out.keep_alive = parser.keep_alive();
  out.captured = std::string(parser.captured());
  return out;
}

Parsed parse(std::string_view text, BodyAllowed body = BodyAllowed::yes, bool eof = true) {
  ResponseParser parser("X-Pod-Name");
  parser.reset(body);
  return parse_pieces(text, {}, parser, eof);
}

TEST(ResponseParser, ParsesContentLength) {
  std::string text = "HTTP/1.1 200 OK\r\nX-Pod-Name: web-1\r\nContent-Length: 2\r\n\r\nok";
  Parsed p = parse(text + "HTTP/1.1 200 OK\r\n");
  EXPECT_EQ(p.state, State::done);
  EXPECT_EQ(p.status, 200);
  EXPECT_TRUE(p.keep_alive);
  EXPECT_EQ(p.captured, "web-1");
  EXPECT_EQ(p.consumed, text.size()) << "stops at the end of the response";
}

TEST(ResponseParser, ParsesChunkedWithExtensionsAndTrailers) {
  Parsed p = parse(
      "HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
      "4;ext=1\r\nabcd\r\nA \r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n",
      BodyAllowed::yes, false);
  EXPECT_EQ(p.state, State::done);
  EXPECT_EQ(p.status, 503);
}

TEST(ResponseParser, CloseDelimitedBodyEndsAtEof) {
  EXPECT_EQ(parse("HTTP/1.1 200 OK\r\n\r\nbody", BodyAllowed::yes, false).state, State::incomplete);
  Parsed p = parse("HTTP/1.1 200 OK\r\n\r\nbody");
  EXPECT_EQ(p.state, State::done);
  EXPECT_FALSE(p.keep_alive);
}

TEST(ResponseParser, KnowsWhichResponsesHaveNoBody) {
  EXPECT_EQ(parse("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", BodyAllowed::no, false).state,
            State::done);
  EXPECT_EQ(parse("HTTP/1.1 204 No Content\r\n\r\n", BodyAllowed::yes, false).state, State::done);
  EXPECT_EQ(parse("HTTP/1.1 304 Not Modified\r\n\r\n", BodyAllowed::yes, false).state, State::done);
}

TEST(ResponseParser, SkipsInterimResponses) {
  Parsed p =
      parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
            BodyAllowed::yes, false);
  EXPECT_EQ(p.state, State::done);
  EXPECT_EQ(p.status, 404);
}

TEST(ResponseParser, FollowsConnectionSemantics) {
  EXPECT_FALSE(
      parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").keep_alive);
  EXPECT_FALSE(parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").keep_alive);
  EXPECT_TRUE(
      parse("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n").keep_alive);
}

TEST(ResponseParser, CutsTheCapturedValue) {
  std::string text =
      "HTTP/1.1 200 OK\r\nx-pod-name: " + std::string(1000, 'p') + "\r\nContent-Length: 0\r\n\r\n";
  EXPECT_EQ(parse(text).captured.size(), ParserLimits{}.max_capture);
}

TEST(ResponseParser, CapturesTwoHeadersAndForgetsThemOnReset) {
  ResponseParser parser(std::array<std::string_view, ResponseParser::kMaxCaptures>{
      "X-Pod-Name", "X-Zerodrop-Router-Error"});
  parser.reset();
  std::string text =
      "HTTP/1.1 502 Bad Gateway\r\nx-zerodrop-router-error: upstream_reset\r\n"
      "X-Pod-Name: web-1\r\nContent-Length: 0\r\n\r\n";
  ASSERT_EQ(parser.feed(text), text.size());
  EXPECT_EQ(parser.captured(0), "web-1");
  EXPECT_EQ(parser.captured(1), "upstream_reset");
  parser.reset();
  std::string next = "HTTP/1.1 200 OK\r\nX-Pod-Name: web-2\r\nContent-Length: 0\r\n\r\n";
  ASSERT_EQ(parser.feed(next), next.size());
  EXPECT_EQ(parser.captured(0), "web-2");
  EXPECT_EQ(parser.captured(1), "") << "a value from the previous response";
}

TEST(ResponseParser, RejectsMalformedResponses) {
  const char* bad[] = {
      "SSH-2.0-OpenSSH\r\n\r\n",
      "HTTP/2 200 OK\r\n\r\n",
      "HTTP/1.1 2x0 OK\r\n\r\n",
      "HTTP/1.1 999 What\r\n\r\n",
      "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
      "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
      "HTTP/1.1 200 OK\r\nX: a\r\n folded\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n0\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
      "HTTP/1.1 101 Switching Protocols\r\n\r\n",
  };
  for (const char* text : bad) {
    EXPECT_EQ(parse(text, BodyAllowed::yes, false).state, State::failed) << text;
  }
}

TEST(ResponseParser, BoundsHeaderSize) {
  std::string huge = "HTTP/1.1 200 OK\r\nX: " + std::string(100000, 'a') + "\r\n\r\n";
  EXPECT_EQ(parse(huge, BodyAllowed::yes, false).state, State::failed);
  std::string many = "HTTP/1.1 200 OK\r\n";
  for (int i = 0; i < 10000; ++i) {
    many += "X-Many: 0123456789\r\n";
  }
  ResponseParser parser;
  parser.reset();
  EXPECT_EQ(parse_pieces(many, {}, parser, false).state, State::failed);
  EXPECT_STRNE(std::string(parser.error()).c_str(), "");
}

TEST(ResponseParser, ReportsStartedAndHeadersDone) {
  ResponseParser parser;
  parser.reset();
  EXPECT_FALSE(parser.started());
  parser.feed("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab");
  EXPECT_TRUE(parser.started());
  EXPECT_TRUE(parser.headers_done());
  EXPECT_EQ(parser.finish(), State::incomplete) << "truncated: the caller classifies it";
}

// Property: however a valid response is split across reads, it parses the same.
TEST(ResponseParser, RandomSplitsParseIdentically) {
  const std::string responses[] = {
      "HTTP/1.1 200 OK\r\nX-Pod-Name: a\r\nContent-Length: 11\r\n\r\nhello world",
      "HTTP/1.1 502 Bad Gateway\r\nTransfer-Encoding: chunked\r\nX-Pod-Name: b\r\n\r\n"
      "3\r\nabc\r\n10;x=y\r\n0123456789abcdef\r\n0\r\nT: 1\r\n\r\n",
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\nConnection: keep-alive\r\n"
      "Content-Length: 0\r\n\r\n",
      "HTTP/1.1 200 OK\n\nclose-delimited body",
  };
  std::mt19937 random(12345);
  for (const std::string& text : responses) {
    Parsed whole = parse(text);
    ASSERT_EQ(whole.state, State::done) << text;
    for (int round = 0; round < 500; ++round) {
      std::vector<size_t> cuts;
      for (size_t i = 1; i < text.size(); ++i) {
        if (random() % 4 == 0) {
          cuts.push_back(i);
        }
      }
      ResponseParser parser("X-Pod-Name");
      parser.reset();
      EXPECT_EQ(parse_pieces(text, cuts, parser), whole) << text;
    }
  }
}

// Property: random bytes (and random bytes after a valid head) never crash, never make the
// parser consume more than it was given, and never need an unbounded buffer.
TEST(ResponseParser, RandomBytesStayBounded) {
  std::mt19937 random(777);
  const std::string prefixes[] = {"", "HTTP/1.1 200 OK\r\n",
                                  "HTTP/1.1 200 OK\r\n"
                                  "Transfer-Encoding: chunked\r\n\r\n"};
  const std::string alphabet = "HTTP/1.0 2\r\n:;abcdef0123456789 -\t";
  for (int round = 0; round < 2000; ++round) {
    std::string text = prefixes[round % 3];
    size_t length = random() % 20000;
    for (size_t i = 0; i < length; ++i) {
      text += round % 2 ? static_cast<char>(random() % 256) : alphabet[random() % alphabet.size()];
    }
    std::vector<size_t> cuts;
    for (size_t at = random() % 3000; at < text.size(); at += 1 + random() % 3000) {
      cuts.push_back(at);
    }
    ResponseParser parser("X-Pod-Name");
    parser.reset();
    Parsed p = parse_pieces(text, cuts, parser);
    EXPECT_LE(p.consumed, text.size());
    EXPECT_LE(p.captured.size(), ParserLimits{}.max_capture);
  }
}

TEST(ResponseParser, KeepsTheFirstBytesOfAnErrorBodyOnly) {
  ResponseParser parser(std::string_view{}, ParserLimits{.max_error_body = 12});
  std::string error =
      "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 40\r\n\r\n"
      "ERROR:  column \"name\" does not exist\n..";
  parse_pieces(error, {50, 70}, parser);
  EXPECT_EQ(parser.error_body(), "ERROR:  colu");

  parser.reset();
  parse_pieces("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", {}, parser);
  EXPECT_EQ(parser.error_body(), "");  // a success keeps nothing, and the last error is gone

  parser.reset();  // chunk framing is not part of the body
  parse_pieces(
      "HTTP/1.1 503 x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", {},
      parser);
  EXPECT_EQ(parser.error_body(), "abcde");

  parser.reset();  // a close-delimited body too
  parse_pieces("HTTP/1.1 502 x\r\n\r\nupstream gone", {}, parser);
  EXPECT_EQ(parser.error_body(), "upstream gon");
}

}  // namespace
}  // namespace zerodrop::http
