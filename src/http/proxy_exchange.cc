// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "http/proxy_exchange.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/rfc7230.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/write.hpp>

namespace zerodrop::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using beast::http::field;
using beast::http::verb;
using boost::system::error_code;

// RFC 9110 section 7.6.1: headers meant for one connection only, plus those the Connection header
// names. Transfer-Encoding goes too: a proxy that buffers whole bodies frames them itself.
template <typename Message>
void remove_hop_by_hop(Message& message) {
  std::vector<std::string> named;
  auto [first, last] = message.equal_range(field::connection);
  for (auto it = first; it != last; ++it) {
    for (auto token : beast::http::token_list(it->value())) {
      named.emplace_back(token);
    }
  }
  for (const std::string& name : named) {
    message.erase(name);
  }
  for (field f : {field::connection, field::keep_alive, field::proxy_connection, field::te,
                  field::trailer, field::transfer_encoding, field::upgrade}) {
    message.erase(f);
  }
}

ProxyFailure io_failure(const error_code& ec) {
  if (ec == beast::error::timeout) {
    return ProxyFailure::upstream_timeout;
  }
  if (ec == beast::http::error::body_limit) {
    return ProxyFailure::body_too_large;
  }
  if (ec == beast::http::error::end_of_stream || ec == beast::http::error::partial_message
      || ec == asio::error::eof || ec == asio::error::broken_pipe) {
    return ProxyFailure::upstream_closed;
  }
  if (ec.category() == make_error_code(beast::http::error::bad_version).category()) {
    return ProxyFailure::bad_response;  // Beast's parser refused the bytes
  }
  return ProxyFailure::upstream_reset;
}

// One exchange in flight; kept alive by its handlers.
class Exchange : public std::enable_shared_from_this<Exchange> {
public:
  Exchange(beast::tcp_stream& upstream, beast::flat_buffer& buffer, const ProxyRequest& request,
           ProxyResponse& response, const ProxyLimits& limits, std::function<void(Exchanged)> done)
      : upstream_(upstream),
        buffer_(buffer),
        request_(request),
        response_(response),
        limits_(limits),
        done_(std::move(done)) {}

  void start() {
    upstream_.expires_after(limits_.upstream_timeout);
    beast::http::async_write(upstream_, request_,
                             [self = shared_from_this()](error_code ec, size_t) {
                               if (ec) {
                                 self->finish(io_failure(ec));
                                 return;
                               }
                               self->read();
                             });
  }

private:
  void read() {
    parser_.emplace();
    parser_->body_limit(limits_.body);
    // A response to HEAD carries the headers a GET would (Content-Length included) and no body.
    parser_->skip(request_.method() == verb::head);
    beast::http::async_read(
        upstream_, buffer_, *parser_,
        [self = shared_from_this()](error_code ec, size_t n) { self->on_read(ec, n); });
  }

  void on_read(const error_code& ec, size_t n) {
    got_bytes_ = got_bytes_ || n > 0;
    if (ec) {
      finish(io_failure(ec));
      return;
    }
    unsigned status = parser_->get().result_int();
    if (status == 101) {
      finish(ProxyFailure::bad_response);  // Upgrade was removed from the request
      return;
    }
    if (status / 100 == 1) {
      read();  // interim: the final response follows on the same connection
      return;
    }
    response_ = parser_->release();
    finish(ProxyFailure::none);
  }

  void finish(ProxyFailure failure) {
    bool keep = failure == ProxyFailure::none && response_.keep_alive();
    done_({failure, got_bytes_, keep});
  }

  beast::tcp_stream& upstream_;
  beast::flat_buffer& buffer_;
  const ProxyRequest& request_;
  ProxyResponse& response_;
  ProxyLimits limits_;
  std::function<void(Exchanged)> done_;
  std::optional<beast::http::response_parser<beast::http::string_body>> parser_;
  bool got_bytes_ = false;
};

}  // namespace

ClientSide client_side(const ProxyRequest& request) {
  return {request.version() == 10 ? 10u : 11u, request.keep_alive(), request.method()};
}

void prepare_upstream_request(ProxyRequest& request) {
  remove_hop_by_hop(request);
  request.version(11);
  request.keep_alive(true);
  if (request.method() == verb::trace) {
    request.body().clear();  // TRACE carries no content (RFC 9110 9.3.8); Beast refuses to frame it
  }
  request.prepare_payload();
}

void exchange(beast::tcp_stream& upstream, beast::flat_buffer& buffer, const ProxyRequest& request,
              ProxyResponse& response, const ProxyLimits& limits,
              std::function<void(Exchanged)> done) {
  std::make_shared<Exchange>(upstream, buffer, request, response, limits, std::move(done))->start();
}

ProxyFailure connect_failure(const error_code& ec) {
  return ec == beast::error::timeout || ec == asio::error::timed_out
             ? ProxyFailure::connect_timeout
             : ProxyFailure::connect_refused;
}

beast::http::status gateway_status(ProxyFailure failure) {
  switch (failure) {
    case ProxyFailure::no_endpoint:
      return beast::http::status::service_unavailable;
    case ProxyFailure::upstream_timeout:
      return beast::http::status::gateway_timeout;
    default:
      return beast::http::status::bad_gateway;
  }
}

void prepare_client_response(ProxyResponse& response, const ClientSide& client,
                             ClientConnection connection) {
  remove_hop_by_hop(response);
  response.erase(kRouterErrorHeader);
  response.version(client.version);
  response.keep_alive(connection == ClientConnection::keep);
  if (client.method != verb::head) {
    response.prepare_payload();
  }
}

ProxyResponse own_response(beast::http::status status, std::string_view text,
                           const ClientSide& client, ClientConnection connection) {
  ProxyResponse response{status, client.version};
  response.set(field::content_type, "text/plain");
  response.body() = std::string(text);
  response.keep_alive(connection == ClientConnection::keep);
  response.prepare_payload();
  return response;
}

void write_response(beast::tcp_stream& client, ProxyResponse& response, const ClientSide& side,
                    std::function<void(error_code)> done) {
  using Serializer = beast::http::response_serializer<beast::http::string_body>;
  auto serializer = std::make_shared<Serializer>(response);
  auto written = [serializer, done = std::move(done)](error_code ec, size_t) {
    done(ec);
  };
  if (side.method == verb::head) {
    beast::http::async_write_header(client, *serializer, std::move(written));
  } else {
    beast::http::async_write(client, *serializer, std::move(written));
  }
}

}  // namespace zerodrop::http
