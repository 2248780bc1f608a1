#pragma once
// Why one of zerodrop's reverse proxies answered a request itself instead of relaying the
// upstream's response. Light (no Beast): the load engine and diagnose read these words too.

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "base/enum_names.h"

namespace zerodrop::http {

enum class ProxyFailure : uint8_t {
  none,              // the upstream answered; its response was relayed
  no_endpoint,       // no upstream to send it to (the lab router: no usable endpoint)
  connect_refused,   // the upstream connection failed (refused, unreachable)
  connect_timeout,   // the upstream connection was not established in time
  upstream_closed,   // the upstream closed the connection before the whole response
  upstream_reset,    // the upstream connection was reset or broke
  upstream_timeout,  // no whole response within the upstream timeout
  bad_response,      // the upstream's bytes are not a response the proxy can relay
  body_too_large,    // the response body is over the proxy's buffering limit
};

inline constexpr size_t kProxyFailureCount = 9;

inline constexpr std::array<std::string_view, kProxyFailureCount> kProxyFailureNames = {
    "none",           "no_endpoint",      "connect_refused", "connect_timeout", "upstream_closed",
    "upstream_reset", "upstream_timeout", "bad_response",    "body_too_large",
};

static_assert(kProxyFailureNames.size() == static_cast<size_t>(ProxyFailure::body_too_large) + 1,
              "one name per ProxyFailure");

constexpr std::string_view to_string(ProxyFailure f) {
  return kProxyFailureNames[static_cast<size_t>(f)];
}

constexpr std::optional<ProxyFailure> proxy_failure_from_string(std::string_view name) {
  return enum_from_name<ProxyFailure>(kProxyFailureNames, name);
}

// Whether the failure says something about the upstream (the app, or the endpoints the proxy was
// given) or only about the proxy. A response the proxy cannot parse or will not buffer may be
// well-formed HTTP that the proxy handles wrongly (a HEAD response with Content-Length once was),
// so those are the proxy's own and never count against the app.
enum class Blame : uint8_t { upstream, proxy };

constexpr Blame blame(ProxyFailure f) {
  return f == ProxyFailure::bad_response || f == ProxyFailure::body_too_large ? Blame::proxy
                                                                              : Blame::upstream;
}

// The response header with which the lab's router marks a response it made itself, naming the
// ProxyFailure. The load engine copies it into RequestRecord::router_error; the router removes it
// from every response it relays, so an app cannot forge it.
inline constexpr std::string_view kRouterErrorHeader = "X-Zerodrop-Router-Error";

}  // namespace zerodrop::http
