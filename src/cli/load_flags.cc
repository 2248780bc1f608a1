#include "cli/load_flags.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/duration.h"
#include "base/error.h"
#include "base/parse.h"
#include "load/grpc.h"
#include "load/input.h"
#include "load/load.h"

namespace zerodrop::cli {
namespace {

void add_connection_flags(CLI::App& app, LoadFlags& f, const LoadFlagSet& set) {
  if (includes(set.flags, LoadFlag::connections)) {
    app.add_option("-c,--connections", f.connections,
                   "maximum concurrent connections (default 8 with --http2 or --grpc)")
        ->capture_default_str()
        ->each([&f](const std::string&) { f.connections_given = true; });
  }
  if (!set.keepalive.empty()) {
    app.add_flag("--keepalive,!--no-keepalive", f.keepalive, std::string(set.keepalive));
  }
  if (!set.fresh_name.empty()) {
    app.add_option(std::string(set.fresh_name), f.fresh_share, std::string(set.fresh))
        ->capture_default_str();
  }
  if (includes(set.flags, LoadFlag::client_retry)) {
    app.add_flag("--client-retry", f.client_retry,
                 "resend once, on a new connection, a failure a browser would resend (idempotent "
                 "method, reused connection, no response byte); both attempts are recorded");
  }
}

void add_request_flags(CLI::App& app, LoadFlags& f, const LoadFlagSet& set) {
  if (includes(set.flags, LoadFlag::method)) {
    app.add_option("--method", f.method, "HTTP method")
        ->capture_default_str()
        ->each([&f](const std::string&) { f.method_given = true; });
  }
  if (includes(set.flags, LoadFlag::header)) {
    app.add_option("-H,--header", f.headers, "'Name: value' request header (repeatable)");
  }
  app.add_option("--timeout", f.timeout, "time allowed for a whole response, from the send")
      ->capture_default_str();
  if (includes(set.flags, LoadFlag::backend_header)) {
    app.add_option("--backend-header", f.backend_header,
                   "response header naming the backend, recorded per request")
        ->capture_default_str();
  }
  if (includes(set.flags, LoadFlag::ok_status)) {
    app.add_option("--ok-status", f.ok_status, "statuses that count as ok, e.g. 200-399,404")
        ->capture_default_str();
  }
}

void add_http2_flags(CLI::App& app, LoadFlags& f) {
  app.add_flag("--http2", f.http2,
               "HTTP/2: h2c by prior knowledge for http://, TLS with ALPN h2 for https://");
  app.add_option("--grpc", f.grpc,
                 "unary gRPC call SERVICE/METHOD (implies --http2 and POST); the request body "
                 "is the serialized request message");
  app.add_option("--body-file", f.body_file, "read the request body from FILE");
  app.add_option("--streams", f.streams,
                 "HTTP/2: concurrent streams per connection (never above the server's limit)")
      ->capture_default_str();
}

// --http2 and --grpc: the protocol, and the flags that only mean something with them.
void apply_http2_flags(const LoadFlags& f, load::Options& o) {
  if (!f.body_file.empty()) {
    o.body = load::read_file(f.body_file, "--body-file");
  }
  if (f.grpc.empty() && !f.http2) {
    return;
  }
  if (!f.grpc.empty()) {
    if (f.method_given) {
      throw Error("--method: a gRPC call is always a POST; leave --method out with --grpc");
    }
    load::grpc_path(f.grpc);  // throws, naming --grpc, on a malformed name
    o.grpc_method = f.grpc;
  }
  o.protocol = f.grpc.empty() ? load::Protocol::http2 : load::Protocol::grpc;
  if (!f.connections_given) {
    o.connections = 8;  // each one is pinned to a pod behind an L4 Service: use 2x replicas
  }
  o.streams = static_cast<uint32_t>(parse_integer(f.streams, "--streams", 1, 100000));
}

}  // namespace

void add_load_flags(CLI::App& app, LoadFlags& f, const LoadFlagSet& set) {
  f.declared = set;
  app.add_option("--rate", f.rate, std::string(set.rate))->capture_default_str();
  add_connection_flags(app, f, set);
  add_request_flags(app, f, set);
  if (includes(set.flags, LoadFlag::http2)) {
    add_http2_flags(app, f);
  }
}

void apply_load_flags(const LoadFlags& f, load::Options& o) {
  const LoadFlagSet& set = f.declared;
  o.rate = parse_number(f.rate, "--rate");
  if (includes(set.flags, LoadFlag::connections)) {
    o.connections = static_cast<uint32_t>(parse_integer(f.connections, "--connections", 1, 100000));
  }
  if (!set.keepalive.empty()) {
    o.keepalive = f.keepalive ? load::Keepalive::on : load::Keepalive::off;
  }
  if (!set.fresh_name.empty()) {
    o.fresh_share = parse_share(f.fresh_share, set.fresh_name);
  }
  o.client_retry = f.client_retry ? load::ClientRetry::once : load::ClientRetry::off;
  for (const std::string& h : f.headers) {
    o.headers.push_back(load::parse_header(h));
  }
  o.timeout = parse_duration(f.timeout, "--timeout");
  if (includes(set.flags, LoadFlag::backend_header)) {
    o.backend_header = f.backend_header;
  }
  if (includes(set.flags, LoadFlag::ok_status)) {
    o.ok_status = load::parse_status_ranges(f.ok_status);
  }
  apply_http2_flags(f, o);
}

}  // namespace zerodrop::cli
