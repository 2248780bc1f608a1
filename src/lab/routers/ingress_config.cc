#include <unistd.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "base/error.h"
#include "http/proxy_failure.h"
#include "http/router_log.h"
#include "lab/routers/ingress.h"

namespace zerodrop::lab {
namespace {

long long ms(Duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

// A regular expression matching `text` literally (the dots of an address).
std::string regex_literal(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::string_view(".\\+*?[^]$(){}|").find(c) != std::string_view::npos) {
      out += '\\';
    }
    out += c;
  }
  return out;
}

// The pod behind the last upstream address nginx tried ($upstream_addr lists one per attempt).
std::string nginx_pod_map(const std::vector<const Endpoint*>& usable) {
  std::string out = "  map $upstream_addr $zd_pod {\n    default \"\";\n";
  for (const Endpoint* e : usable) {
    out += fmt::format("    \"~(^|, ){}$\" {};\n",
                       regex_literal(fmt::format("{}:{}", e->ip, e->port)), e->pod);
  }
  return out + "  }\n";
}

// Why nginx answered itself, from its own upstream variables: no connect time on the last
// attempt is a failed connect (502: refused, 504: timed out); connected but no response header is
// a broken upstream (502) or one too slow (504). A response the pod made has a header time.
constexpr const char* kNginxErrorMap =
    "  map \"$status|$upstream_connect_time|$upstream_header_time\" $zd_error {\n"
    "    default \"\";\n"
    "    \"~^502\\|(.*, )?-\\|\" connect_refused;\n"
    "    \"~^504\\|(.*, )?-\\|\" connect_timeout;\n"
    "    \"~^502\\|.*\\|(.*, )?-$\" upstream_reset;\n"
    "    \"~^504\\|.*\\|(.*, )?-$\" upstream_timeout;\n"
    "  }\n";

std::string nginx_upstream(const std::vector<const Endpoint*>& usable) {
  // max_fails=0: ingress-nginx does not take an endpoint out on failures (its endpoints are the
  // EndpointSlice's), so nginx's own passive health check does not hide refusals here either.
  std::string out = "  upstream pods {\n";
  for (const Endpoint* e : usable) {
    out += fmt::format("    server {}:{} max_fails=0;\n", e->ip, e->port);
  }
  return out + "    keepalive 32;\n  }\n";
}

std::string nginx_retries(int retries) {
  if (retries == 0) {
    return "      proxy_next_upstream off;\n";
  }
  return fmt::format(
      "      proxy_next_upstream error timeout;\n      proxy_next_upstream_tries {};\n",
      retries + 1);
}

std::string nginx_location(const IngressSettings& s, const std::vector<const Endpoint*>& usable) {
  if (usable.empty()) {
    return fmt::format(
        "    location / {{\n      add_header {} no_endpoint always;\n      return 503;\n    }}\n",
        http::kRouterErrorHeader);
  }
  return fmt::format(
      "    location / {{\n"
      "      proxy_pass http://pods;\n"
      "      proxy_http_version 1.1;\n"
      "      proxy_set_header Connection \"\";\n"
      "      proxy_set_header Host $http_host;\n"
      "      proxy_connect_timeout {}ms;\n"
      "      proxy_read_timeout {}ms;\n"
      "      proxy_send_timeout {}ms;\n"
      "      proxy_max_temp_file_size 0;\n"
      "{}"
      "      proxy_hide_header X-Pod-Name;\n"
      "      proxy_hide_header {};\n"
      "      add_header X-Pod-Name $zd_pod always;\n"
      "      add_header {} $zd_error always;\n"
      "    }}\n",
      ms(s.connect_timeout), ms(s.upstream_timeout), ms(s.upstream_timeout),
      nginx_retries(s.retries), http::kRouterErrorHeader, http::kRouterErrorHeader);
}

}  // namespace

std::string to_string(Ingress ingress) {
  switch (ingress) {
    case Ingress::nginx:
      return "nginx";
    case Ingress::haproxy:
      return "haproxy";
    case Ingress::none:
      break;
  }
  return "none";
}

std::string ingress_binary(Ingress ingress) {
  std::string path = ingress == Ingress::nginx ? "/usr/sbin/nginx" : "/usr/sbin/haproxy";
  if (::access(path.c_str(), X_OK) != 0) {
    std::string package = ingress == Ingress::nginx ? "nginx-light" : "haproxy";
    throw Error(fmt::format("--ingress {}: {} is not installed (package {}: scripts/setup.sh test)",
                            to_string(ingress), path, package));
  }
  return path;
}

std::string nginx_config(const IngressSettings& s, const std::vector<const Endpoint*>& usable,
                         uint64_t generation) {
  const std::string& d = s.dir;
  return fmt::format(
      "# Written by zerodrop lab at each endpoint change (generation {gen}), then SIGHUP.\n"
      "daemon off;\nmaster_process on;\nworker_processes 1;\npid {d}/nginx.pid;\n"
      "error_log {d}/error.log notice;\n"
      "events {{\n  worker_connections 4096;\n}}\n"
      "http {{\n"
      // Request bodies stay in memory (nginx would buffer larger ones to a temporary file).
      "  client_body_buffer_size 1m;\n"
      "  client_max_body_size 1m;\n  keepalive_timeout {keepalive}s;\n"
      "  log_format zerodrop '{access}';\n"
      "  access_log {d}/access.log zerodrop;\n"
      "{errors}{pods}{upstream}"
      "  server {{\n    listen 127.0.0.1:{control};\n    access_log off;\n"
      "    location / {{\n      return 200 \"{gen}\\n\";\n    }}\n  }}\n"
      "  server {{\n    listen {host}:{port};\n{location}  }}\n"
      "}}\n",
      fmt::arg("gen", generation), fmt::arg("d", d), fmt::arg("errors", kNginxErrorMap),
      fmt::arg("access", http::kNginxAccessFormat),
      fmt::arg("keepalive", http::kNginxKeepaliveTimeout.count()),
      fmt::arg("pods", nginx_pod_map(usable)),
      fmt::arg("upstream", usable.empty() ? "" : nginx_upstream(usable)),
      fmt::arg("host", s.listen_host), fmt::arg("port", s.listen_port),
      fmt::arg("control", s.control_port), fmt::arg("location", nginx_location(s, usable)));
}

std::string haproxy_config(const IngressSettings& s) {
  // retry-on conn-failure with redispatch is the l7 router's retry: another pod after a failed
  // connect. HAProxy's default (3 retries on the same server) would hide refusals the l7 router
  // and ingress-nginx do not.
  std::string retries = s.retries == 0 ? "  retries 0\n"
                                       : fmt::format(
                                           "  retries {}\n  option redispatch 1\n"
                                           "  retry-on conn-failure\n",
                                           s.retries);
  return fmt::format(
      "# Written by zerodrop lab; servers come and go through the runtime API ({d}/api.sock).\n"
      "global\n  nbthread 1\n  maxconn 4096\n"
      "  stats socket {d}/api.sock mode 600 level admin\n  stats timeout 24h\n"
      "  log stdout format raw local0\n"
      "defaults\n  mode http\n  log global\n"
      "  timeout connect {connect}ms\n  timeout client 60s\n  timeout server {server}ms\n"
      "  timeout http-keep-alive 60s\n{retries}"
      "frontend ingress\n  bind {host}:{port}\n  default_backend pods\n"
      "  log-format \"{log}\"\n"
      "  acl relayed var(txn.relayed) -m found\n"
      "  acl has_server srv_name -m found\n"
      "  http-after-response set-header X-Pod-Name %[srv_name] if has_server\n"
      "  http-after-response set-header {h} no_endpoint if !relayed {{ status 503 }} !has_server\n"
      "  http-after-response set-header {h} connect_refused if !relayed {{ status 503 }} "
      "has_server\n"
      "  http-after-response set-header {h} upstream_reset if !relayed {{ status 502 }}\n"
      "  http-after-response set-header {h} upstream_timeout if !relayed {{ status 504 }}\n"
      "backend pods\n  balance roundrobin\n"
      "  http-response set-var(txn.relayed) bool(true)\n"
      "  http-response del-header {h}\n",
      fmt::arg("d", s.dir), fmt::arg("connect", ms(s.connect_timeout)),
      fmt::arg("server", ms(s.upstream_timeout)), fmt::arg("retries", retries),
      fmt::arg("host", s.listen_host), fmt::arg("port", s.listen_port),
      fmt::arg("h", http::kRouterErrorHeader), fmt::arg("log", http::kHaproxyLogFormat));
}

std::vector<std::string> haproxy_commands(std::map<std::string, bool>& have,
                                          const std::vector<const Endpoint*>& usable,
                                          const EndpointTable& table) {
  std::vector<std::string> out;
  std::set<std::string> wanted;
  for (const Endpoint* e : usable) {
    wanted.insert(e->pod);
    auto it = have.find(e->pod);
    if (it == have.end()) {
      out.push_back(fmt::format("add server pods/{} {}:{}", e->pod, e->ip, e->port));
    }
    if (it == have.end() || !it->second) {
      out.push_back(fmt::format("set server pods/{} state ready", e->pod));
      have[e->pod] = true;
    }
  }
  for (auto it = have.begin(); it != have.end();) {
    if (wanted.contains(it->first)) {
      ++it;
      continue;
    }
    if (it->second) {
      out.push_back(fmt::format("set server pods/{} state maint", it->first));
      it->second = false;
    }
    if (table.find(it->first) == nullptr) {
      out.push_back(fmt::format("del server pods/{}", it->first));
      it = have.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

}  // namespace zerodrop::lab
