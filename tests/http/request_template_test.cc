#include "http/request_template.h"

#include <string>

#include <gtest/gtest.h>

namespace zerodrop::http {
namespace {

std::string render(const RequestTemplate& t, uint64_t seq) {
  std::string out(t.size(), '\0');
  t.write(out.data(), seq);
  return out;
}

TEST(RequestTemplate, SerializesAGetWithSeqSlot) {
  RequestTemplate t(
      RequestSpec{"GET", "/x?y=1", "h:8080", {{"X-A", "1"}}, 0, ConnectionHeader::keep_alive});
  EXPECT_EQ(render(t, 42),
            "GET /x?y=1 HTTP/1.1\r\nHost: h:8080\r\nUser-Agent: zerodrop/0.1\r\nX-A: 1\r\n"
            "X-Zerodrop-Seq: 42                  \r\n\r\n");
}

TEST(RequestTemplate, PatchesOnlyTheSeqDigits) {
  RequestTemplate t(RequestSpec{"GET", "/", "h", {}, 0, ConnectionHeader::keep_alive});
  std::string a = render(t, 0);
  std::string b = render(t, UINT64_MAX);
  EXPECT_EQ(a.size(), b.size());
  EXPECT_NE(b.find("X-Zerodrop-Seq: 18446744073709551615\r\n"), std::string::npos);
  EXPECT_NE(a.find("X-Zerodrop-Seq: 0                   \r\n"), std::string::npos);
}

TEST(RequestTemplate, AddsContentLengthAndConnectionClose) {
  RequestTemplate t(RequestSpec{"POST", "/", "h", {}, 5, ConnectionHeader::close});
  std::string head = render(t, 1);
  EXPECT_NE(head.find("Content-Length: 5\r\n"), std::string::npos);
  EXPECT_NE(head.find("Connection: close\r\n"), std::string::npos);
}

TEST(RequestTemplate, KeepsUserHostAndAgent) {
  RequestTemplate t(RequestSpec{
      "GET", "/", "h", {{"host", "other"}, {"User-Agent", "me"}}, 0, ConnectionHeader::keep_alive});
  std::string head = render(t, 1);
  EXPECT_EQ(head.find("Host: h"), std::string::npos);
  EXPECT_NE(head.find("host: other\r\n"), std::string::npos);
  EXPECT_EQ(head.find("zerodrop/0.1"), std::string::npos);
}

}  // namespace
}  // namespace zerodrop::http
