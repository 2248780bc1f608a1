#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace zerodrop::http {

// An http:// or https:// URL split into what an HTTP/1.1 client needs.
struct Url {
  std::string host;         // host name or address, without brackets for IPv6
  uint16_t port = 80;       // 443 for https
  bool tls = false;         // https
  std::string target;       // origin-form request target: "/path?query" (never empty)
  std::string host_header;  // value of the Host header: "host" or "host:port"
};

// Parses an absolute http:// or https:// URL with Boost.URL. Throws Error naming the URL when it is
// malformed, has no host, or uses another scheme.
Url parse_url(std::string_view text);

}  // namespace zerodrop::http
