#pragma once

// Internal to the lab: real ingresses (Debian's nginx and HAProxy) as a node's L7 router, and
// the pure parts of configuring them (ingress_config.cc), which the unit tests check without the
// programs.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/duration.h"
#include "lab/routers/endpoint_table.h"
#include "lab/routers/router.h"

namespace zerodrop::lab {

class Recorder;

// What an ingress's configuration is made of: where it lives and the router's own settings.
struct IngressSettings {
  std::string dir;  // config, logs and sockets
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 0;
  uint16_t control_port = 0;  // nginx: where the controller asks which generation serves
  int retries = 0;            // more attempts after a connect failure
  Duration connect_timeout = std::chrono::seconds(1);
  Duration upstream_timeout = std::chrono::seconds(30);
};

// "nginx", "haproxy" ("none" for the l7 router).
std::string to_string(Ingress ingress);

// nginx.conf routing to `usable` (round robin, upstream keep-alive; none: a 503, as ingress-nginx
// answers a Service without endpoints). Every response names its pod (X-Pod-Name, from the
// upstream address nginx used) and, when nginx answered itself, why (X-Zerodrop-Router-Error,
// from its upstream timings). The control port answers `generation`: the controller knows the
// reload finished when new workers answer the new one.
std::string nginx_config(const IngressSettings& settings,
                         const std::vector<const Endpoint*>& usable, uint64_t generation);

// haproxy.cfg: one frontend, one backend whose servers come and go through the runtime API on
// DIR/api.sock (removed once the controller is connected); responses carry X-Pod-Name (the server,
// named after its pod) and X-Zerodrop-Router-Error when HAProxy answered itself.
std::string haproxy_config(const IngressSettings& settings);

// The runtime API commands that take HAProxy's servers `have` (pod -> in service) to `usable`:
// a new endpoint is added and enabled, one no longer usable goes to maint, one gone from the
// table (`present` false) and in maint is deleted. Updates `have` as if every command succeeded.
std::vector<std::string> haproxy_commands(std::map<std::string, bool>& have,
                                          const std::vector<const Endpoint*>& usable,
                                          const EndpointTable& table);

// The router of one node, running `options.ingress` in `options.ingress_dir`. Throws Error when
// the program is missing or does not start (naming its log).
std::unique_ptr<Router> start_ingress(const RouterOptions& options, Recorder* recorder);

// The program that runs `ingress` ("/usr/sbin/nginx"). Throws Error naming it and the setup
// command when it is not installed.
std::string ingress_binary(Ingress ingress);

}  // namespace zerodrop::lab
