#include "load/plan.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cmath>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/context.hpp>
#include <fmt/format.h>

#include "base/error.h"
#include "base/text.h"
#include "http/idempotent.h"
#include "http/url.h"
#include "load/grpc.h"

namespace zerodrop::load {
namespace {

namespace asio = boost::asio;

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c))
           || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

void check_headers(const Options& options) {
  for (const auto& [name, value] : options.headers) {
    if (!is_token(name)) {
      throw Error(fmt::format("-H: invalid header name '{}'", name));
    }
    if (value.find_first_of("\r\n") != std::string::npos) {
      throw Error(fmt::format("-H: the value of '{}' contains a line break", name));
    }
  }
}

void check_numbers(const Options& options) {
  if (!std::isfinite(options.rate) || options.rate < 0) {
    throw Error(
        fmt::format("--rate: expected 0 or more requests per second, got {}", options.rate));
  }
  // Bounds that keep every intended send time exact and finite: beyond 10 million a second the
  // schedule means nothing (use --rate 0), below one a thousand seconds nothing would be sent.
  if (options.rate > 0 && (options.rate < 0.001 || options.rate > 1e7)) {
    throw Error(fmt::format(
        "--rate: expected 0 (as fast as possible) or 0.001 to 10000000 requests per second, got {}",
        options.rate));
  }
  if (options.duration <= Duration::zero()) {
    throw Error("--duration: must be more than 0");
  }
  if (options.timeout <= Duration::zero() || options.connect_timeout <= Duration::zero()) {
    throw Error("--timeout: must be more than 0");
  }
  if (options.connections == 0) {
    throw Error("--connections: must be at least 1");
  }
  if (options.threads == 0) {
    throw Error("--threads: must be at least 1");
  }
  if (options.interval <= Duration::zero()) {
    throw Error("--interval: must be more than 0");
  }
  if (!(options.fresh_share >= 0 && options.fresh_share <= 1)) {
    throw Error(
        fmt::format("--fresh-share: expected 0% to 100%, got {}%", options.fresh_share * 100));
  }
}

void check_http2(const Options& options) {
  if (options.protocol == Protocol::http1) {
    return;
  }
  if (options.client_retry == ClientRetry::once) {
    throw Error(
        "--client-retry: HTTP/1.1 only (over HTTP/2 unprocessed requests are resent "
        "without it; see --no-retry-unprocessed)");
  }
  if (options.streams == 0) {
    throw Error("--streams: must be at least 1");
  }
  if (options.protocol == Protocol::grpc) {
    grpc_path(options.grpc_method);  // throws on a malformed name
  }
}

// The first address of `host` (IPv4 preferred, as most servers listen there), numeric.
std::string resolve(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr) {
    throw Error(fmt::format("cannot resolve host '{}': {}", host, gai_strerror(rc)));
  }
  const addrinfo* pick = found;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      pick = a;
      break;
    }
  }
  char text[INET6_ADDRSTRLEN] = {};
  const void* addr =
      pick->ai_family == AF_INET
          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(pick->ai_addr)->sin_addr)
          : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(pick->ai_addr)->sin6_addr);
  inet_ntop(pick->ai_family, addr, text, sizeof text);
  freeaddrinfo(found);
  return text;
}

// Connections are shared by targets with the same address, port and (for https) server name: a
// TLS connection is verified for one name.
uint32_t endpoint_index(Plan& plan, PlanEndpoint endpoint) {
  for (size_t i = 0; i < plan.endpoints.size(); ++i) {
    const PlanEndpoint& e = plan.endpoints[i];
    if (e.address == endpoint.address && e.port == endpoint.port && e.tls == endpoint.tls
        && e.server_name == endpoint.server_name && e.netns == endpoint.netns) {
      return static_cast<uint32_t>(i);
    }
  }
  plan.endpoints.push_back(std::move(endpoint));
  return static_cast<uint32_t>(plan.endpoints.size() - 1);
}

// One client context for every https connection: TLS 1.2 or later, offering HTTP/1.1 (or h2) by
// ALPN, verifying the peer against --cacert or the system's trust store unless --insecure.
std::shared_ptr<asio::ssl::context> make_tls_context(const Options& options) {
  auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
  SSL_CTX* native = context->native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  static constexpr unsigned char kAlpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  static constexpr unsigned char kAlpnH2[] = {2, 'h', '2'};
  if (options.protocol == Protocol::http1) {
    SSL_CTX_set_alpn_protos(native, kAlpn, sizeof kAlpn);
  } else {
    SSL_CTX_set_alpn_protos(native, kAlpnH2, sizeof kAlpnH2);
  }
  boost::system::error_code ec;
  if (options.insecure) {
    context->set_verify_mode(asio::ssl::verify_none);
    return context;
  }
  context->set_verify_mode(asio::ssl::verify_peer);
  if (!options.ca_file.empty()) {
    context->load_verify_file(options.ca_file, ec);
    if (ec) {
      throw Error(fmt::format("--cacert: cannot load certificates from '{}': {}", options.ca_file,
                              ec.message()));
    }
  } else {
    context->set_default_verify_paths(ec);  // a missing store shows as failed verification
  }
  return context;
}

// HTTP/2 header fields of a target; for gRPC the method's path and the fixed gRPC fields, with
// a grpc-timeout from --timeout (in milliseconds: at most 8 digits).
std::vector<std::pair<std::string, std::string>> h2_headers(const Options& options,
                                                            const Target& target,
                                                            const http::Url& url) {
  if (options.protocol == Protocol::http1) {
    return {};
  }
  bool grpc = options.protocol == Protocol::grpc;
  std::vector<std::pair<std::string, std::string>> h = {
      {":method", grpc ? "POST" : target.method},
      {":scheme", url.tls ? "https" : "http"},
      {":authority", url.host_header},
      {":path", grpc ? grpc_path(options.grpc_method) : url.target}};
  if (grpc) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(options.timeout).count();
    h.emplace_back("content-type", "application/grpc");
    h.emplace_back("te", "trailers");
    h.emplace_back("grpc-timeout", fmt::format("{}m", std::min<int64_t>(ms, 99'999'999)));
  } else if (!options.body.empty()) {
    h.emplace_back("content-length", std::to_string(options.body.size()));
  }
  for (const auto& [name, value] : options.headers) {
    h.emplace_back(ascii_lower(name), value);
  }
  return h;
}

PlanTarget make_target(Plan& plan, const Options& options, const Target& target) {
  if (!is_token(target.method)) {
    throw Error(fmt::format("--method: invalid method '{}'", target.method));
  }
  http::Url url = http::parse_url(target.url);
  http::RequestSpec spec{target.method,   url.target,          url.host_header,
                         options.headers, options.body.size(), http::ConnectionHeader::keep_alive};
  http::RequestSpec last = spec;
  last.connection = http::ConnectionHeader::close;
  PlanEndpoint to{resolve(url.host), url.port, url.tls, url.tls ? url.host : std::string()};
  boost::system::error_code not_an_address;
  asio::ip::make_address(url.host, not_an_address);
  to.server_name_is_address = url.tls && !not_an_address;
  to.netns = target.netns;
  uint32_t endpoint = endpoint_index(plan, std::move(to));
  if (url.tls && !plan.tls) {
    plan.tls = make_tls_context(options);
  }
  bool idempotent = options.protocol != Protocol::grpc  // every gRPC call is a POST
                    && http::idempotent(boost::beast::http::string_to_verb(target.method));
  return PlanTarget{endpoint,
                    http::RequestTemplate(spec),
                    http::RequestTemplate(last),
                    target.method == "HEAD" ? http::BodyAllowed::no : http::BodyAllowed::yes,
                    h2_headers(options, target, url),
                    idempotent ? record::Idempotent::yes : record::Idempotent::no};
}

}  // namespace

bool Plan::is_ok_grpc(int grpc_status) const {
  return std::find(ok_grpc_status.begin(), ok_grpc_status.end(), grpc_status)
         != ok_grpc_status.end();
}

bool Plan::is_ok(int status) const {
  return std::any_of(ok_status.begin(), ok_status.end(),
                     [&](const StatusRange& r) { return status >= r.first && status <= r.last; });
}

bool closes_connection(double share, uint64_t seq) {
  auto whole = [share](uint64_t k) {
    return std::floor(static_cast<double>(k) * share);
  };
  return share > 0 && whole(seq + 1) > whole(seq);
}

Plan make_plan(const Options& options) {
  check_numbers(options);
  check_headers(options);
  if (options.targets.empty()) {
    throw Error("no URL to load: give a URL or --targets FILE");
  }
  check_http2(options);
  Plan plan;
  plan.body = options.protocol == Protocol::grpc ? grpc_frame(options.body) : options.body;
  plan.ok_status = options.ok_status;
  plan.protocol = options.protocol;
  plan.streams = options.streams;
  plan.ok_grpc_status = options.ok_grpc_status;
  plan.retry_unprocessed = options.retry_unprocessed;
  for (const Target& target : options.targets) {
    plan.targets.push_back(make_target(plan, options, target));
    plan.max_head = std::max(plan.max_head, plan.targets.back().close.size());
    plan.max_head = std::max(plan.max_head, plan.targets.back().keep_alive.size());
  }
  return plan;
}

}  // namespace zerodrop::load
