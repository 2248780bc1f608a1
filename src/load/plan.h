#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "http/request_template.h"
#include "http/response_parser.h"
#include "load/load.h"

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace zerodrop::load {

// A resolved host:port that connections open to. Targets that share one share its connections.
struct PlanEndpoint {
  std::string address;  // numeric IPv4 or IPv6 address
  uint16_t port = 0;
  bool tls = false;         // https
  std::string server_name;  // https: the URL's host, sent as SNI and checked in the certificate
  bool server_name_is_address = false;  // an IP literal: checked as an address, no SNI
  int netns = -1;                       // Target::netns
};

// One target, ready to send: pre-serialized heads for a kept-alive and a last request.
struct PlanTarget {
  uint32_t endpoint = 0;
  http::RequestTemplate keep_alive;
  http::RequestTemplate close;
  http::BodyAllowed body = http::BodyAllowed::yes;  // no for HEAD
  // HTTP/2: the request's header fields, pseudo-headers first, names lower-case (the sequence
  // header is added per request).
  std::vector<std::pair<std::string, std::string>> h2_headers;
  record::Idempotent idempotent = record::Idempotent::yes;  // its method (http/idempotent.h)
};

// Everything the workers read, validated and built once before the run; read-only afterwards.
struct Plan {
  std::vector<PlanEndpoint> endpoints;
  std::vector<PlanTarget> targets;
  std::string body;
  size_t max_head = 0;  // the longest request head, for the per-connection send buffer
  std::vector<StatusRange> ok_status;
  std::shared_ptr<boost::asio::ssl::context> tls;  // set when an endpoint is https
  Protocol protocol = Protocol::http1;
  uint32_t streams = 100;
  std::vector<int> ok_grpc_status;
  RetryUnprocessed retry_unprocessed = RetryUnprocessed::once;

  bool is_ok(int status) const;
  bool is_ok_grpc(int grpc_status) const;
};

// Whether request `seq` is sent with `Connection: close` to make `share` (0..1) of the requests
// the last on their connection: evenly spread, request k closes when floor((k+1)·share) grows.
bool closes_connection(double share, uint64_t seq);

// Validates `options` and resolves every host. Throws Error naming the culprit: no target, a
// malformed or non-http(s) URL, an unresolvable host, a bad header, a non-positive duration, an
// unreadable --cacert.
Plan make_plan(const Options& options);

}  // namespace zerodrop::load
