#include "http/url.h"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <fmt/format.h>

#include "base/error.h"
#include "base/text.h"

namespace zerodrop::http {
namespace {

uint16_t port_of(const boost::urls::url_view& url, std::string_view text, uint16_t fallback) {
  if (!url.has_port() || url.port().empty()) {
    return fallback;
  }
  std::string_view digits = url.port();
  uint32_t port = 0;
  for (char c : digits) {
    port = port * 10 + static_cast<uint32_t>(c - '0');
    if (port > 65535) {
      break;
    }
  }
  if (port == 0 || port > 65535) {
    throw Error(fmt::format("malformed URL '{}': port {} is out of range", text, digits));
  }
  return static_cast<uint16_t>(port);
}

}  // namespace

Url parse_url(std::string_view text) {
  auto parsed = boost::urls::parse_uri(text);
  if (!parsed) {
    throw Error(fmt::format("malformed URL '{}': {}", text, parsed.error().message()));
  }
  const boost::urls::url_view& url = *parsed;
  std::string scheme = ascii_lower(url.scheme());
  if (scheme != "http" && scheme != "https") {
    throw Error(fmt::format(
        "unsupported scheme '{}' in '{}': only http:// and https:// are supported", scheme, text));
  }
  if (!url.has_authority() || url.encoded_host().empty()) {
    throw Error(fmt::format("malformed URL '{}': no host", text));
  }
  if (url.has_userinfo()) {
    throw Error(fmt::format("malformed URL '{}': credentials in URLs are not supported", text));
  }
  Url out;
  out.tls = scheme == "https";
  out.host = url.host_address();  // brackets of IPv6 literals removed, percent-decoded
  out.port = port_of(url, text, out.tls ? 443 : 80);
  std::string_view path = url.encoded_path();
  out.target = path.empty() ? "/" : std::string(path);
  if (url.has_query()) {
    out.target += '?';
    out.target += std::string_view(url.encoded_query());
  }
  out.host_header = std::string(url.encoded_host_and_port());
  return out;
}

}  // namespace zerodrop::http
