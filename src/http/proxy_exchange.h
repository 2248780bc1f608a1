#pragma once
// One HTTP/1.1 request forwarded by a reverse proxy: the step the lab's l7 router and `zerodrop
// run`'s front proxy share. The choice of upstream, connection pooling and retries stay each
// caller's policy. Includes Beast: for the proxies' .cc files only.

#include <cstdint>
#include <functional>
#include <string_view>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/verb.hpp>

#include "base/duration.h"
#include "http/proxy_failure.h"

namespace zerodrop::http {

using ProxyRequest = boost::beast::http::request<boost::beast::http::string_body>;
using ProxyResponse = boost::beast::http::response<boost::beast::http::string_body>;

// Bodies are buffered whole (no streaming), so each proxy bounds them; the caller's constants say
// why their values.
struct ProxyLimits {
  uint64_t body = 0;            // bytes of a request or response body
  Duration upstream_timeout{};  // writing the request and reading the whole response
};

// What a proxy keeps of the client's request once it is rewritten for the upstream.
struct ClientSide {
  unsigned version = 11;   // 10 or 11: replies use it
  bool keep_alive = true;  // what the client asked (HTTP/1.0: only with Connection: keep-alive)
  boost::beast::http::verb method = boost::beast::http::verb::get;
};

// Read it before prepare_upstream_request rewrites the request.
ClientSide client_side(const ProxyRequest& request);

// Rewrites a request read from a client for the upstream: hop-by-hop headers removed (Connection
// and the headers it names, Keep-Alive, Proxy-Connection, TE, Trailer, Transfer-Encoding, Upgrade),
// HTTP/1.1 with keep-alive (upstream connections are reused whatever the client asked), and the
// buffered body framed by Content-Length.
void prepare_upstream_request(ProxyRequest& request);

// How one exchange with the upstream ended.
struct Exchanged {
  ProxyFailure failure = ProxyFailure::none;
  bool got_bytes = false;            // some response bytes arrived: a resend could repeat it
  bool upstream_keep_alive = false;  // the upstream connection may carry another request
};

// Writes `request` (prepared) on `upstream` and reads the whole response into `response` under
// `limits`. Interim 1xx responses are consumed: the request body was read whole before it was
// sent, so 100 Continue means nothing to the client, and 103 Early Hints is only a hint. A response
// to HEAD has no body whatever its Content-Length says. A 101 is a bad_response (Upgrade is not
// supported). Calls `done` once, on the stream's executor; never throws. `upstream`, `buffer`,
// `request` and `response` must outlive the exchange (the caller's session, kept alive by `done`).
void exchange(boost::beast::tcp_stream& upstream, boost::beast::flat_buffer& buffer,
              const ProxyRequest& request, ProxyResponse& response, const ProxyLimits& limits,
              std::function<void(Exchanged)> done);

// Which failure a failed connect to the upstream is (connect_timeout or connect_refused).
ProxyFailure connect_failure(const boost::system::error_code& ec);

// The status a proxy answers a failure with: 503 without an endpoint, 504 when the upstream took
// too long to answer, 502 otherwise (a connect timeout included, as the lab's router always did).
boost::beast::http::status gateway_status(ProxyFailure failure);

enum class ClientConnection { keep, close };

// Rewrites an upstream response for the client: hop-by-hop headers and kRouterErrorHeader
// removed, the client's HTTP version, `connection` as the caller decided, and the body framed by
// Content-Length (a response to HEAD keeps the upstream's Content-Length).
void prepare_client_response(ProxyResponse& response, const ClientSide& client,
                             ClientConnection connection);

// A response the proxy makes itself: `status`, `text` as a text/plain body, for `client`.
ProxyResponse own_response(boost::beast::http::status status, std::string_view text,
                           const ClientSide& client, ClientConnection connection);

// Writes the prepared `response` to `client` (its header only after a HEAD, even when the header
// says Content-Length), then calls `done`. `response` must outlive the write.
void write_response(boost::beast::tcp_stream& client, ProxyResponse& response,
                    const ClientSide& side, std::function<void(boost::system::error_code)> done);

}  // namespace zerodrop::http
