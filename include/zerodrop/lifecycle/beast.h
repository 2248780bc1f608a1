#pragma once

#include <optional>
#include <string>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "zerodrop/lifecycle/shutdown.h"

namespace zerodrop::lifecycle {

// The paths answered by answer_probe(); an empty path disables that endpoint.
struct Endpoints {
  std::string readiness = "/readyz";
  std::string liveness = "/healthz";
  std::string metrics = "/metrics";
};

using StringResponse = boost::beast::http::response<boost::beast::http::string_body>;

// Answers the lifecycle endpoints: readiness 200 "ready" while serving and 503 "shutting down"
// from the signal on; liveness 200 "alive" throughout; metrics in Prometheus text. nullopt for
// any other request (the server handles it). Keep-alive follows apply_keep_alive().
template <class Body, class Fields>
std::optional<StringResponse> answer_probe(const Shutdown& shutdown,
                                           const boost::beast::http::request<Body, Fields>& request,
                                           const Endpoints& endpoints = {}) {
  namespace http = boost::beast::http;
  std::string_view target(request.target().data(), request.target().size());
  target = target.substr(0, target.find('?'));
  auto reply = [&](http::status status, std::string body, const char* type) {
    StringResponse response(status, request.version());
    response.set(http::field::content_type, type);
    response.body() = std::move(body);
    response.prepare_payload();
    response.keep_alive(request.keep_alive() && shutdown.keep_connection());
    return std::optional<StringResponse>(std::move(response));
  };
  if (!endpoints.readiness.empty() && target == endpoints.readiness) {
    return shutdown.ready()
               ? reply(http::status::ok, "ready\n", "text/plain")
               : reply(http::status::service_unavailable, "shutting down\n", "text/plain");
  }
  if (!endpoints.liveness.empty() && target == endpoints.liveness) {
    return reply(http::status::ok, "alive\n", "text/plain");
  }
  if (!endpoints.metrics.empty() && target == endpoints.metrics) {
    return reply(http::status::ok, shutdown.metrics(), "text/plain; version=0.0.4");
  }
  return std::nullopt;
}

// Sets the response's keep-alive: the client's wish unless the shutdown has begun, in which
// case the response carries `Connection: close`. Returns whether the connection stays open.
template <class RequestBody, class RequestFields, class ResponseBody, class ResponseFields>
bool apply_keep_alive(const Shutdown& shutdown,
                      const boost::beast::http::request<RequestBody, RequestFields>& request,
                      boost::beast::http::response<ResponseBody, ResponseFields>& response) {
  bool keep = request.keep_alive() && shutdown.keep_connection();
  response.keep_alive(keep);
  return keep;
}

// Closes `acceptor` when draining starts (stop accepting), before idle connections are closed.
// The acceptor must outlive the Shutdown's callbacks; the close runs on the acceptor's executor
// (at once when the transition happens on it).
inline void close_when_draining(Shutdown& shutdown, boost::asio::ip::tcp::acceptor& acceptor) {
  shutdown.on_transition([&acceptor](State state) {
    if (state == State::draining) {
      boost::asio::dispatch(acceptor.get_executor(), [&acceptor] {
        boost::system::error_code ignored;
        acceptor.close(ignored);
      });
    }
  });
}

}  // namespace zerodrop::lifecycle
