#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "base/duration.h"

namespace zerodrop::lab {

// A lifecycle handler, as a container's preStop: `sleep:10`, `exec:'cmd args'`, `http:/path`.
struct HookSpec {
  enum class Kind { none, sleep, exec, http };
  Kind kind = Kind::none;
  Duration sleep{0};
  std::vector<std::string> command;  // exec
  std::string path;                  // http (GET on the pod's address and port)
  std::string describe() const;      // the flag form: "sleep:10s", "none"
};

// A kubelet probe: `http:/readyz`, `tcp`, `exec:'cmd args'`, `grpc[:SERVICE]`, `none`, with
// kubelet's knobs.
struct ProbeSpec {
  enum class Kind { none, http, tcp, exec, grpc };
  Kind kind = Kind::none;
  std::string path;     // http
  std::string service;  // grpc: the grpc.health.v1 service asked about ("": the whole server)
  uint16_t port = 0;    // grpc: a manifest's own probe port; 0: the pod's port
  std::vector<std::string> command;
  Duration initial_delay{0};
  Duration period = std::chrono::seconds(1);  // the lab's default; Kubernetes' is 10 s
  Duration timeout = std::chrono::seconds(1);
  int success_threshold = 1;
  int failure_threshold = 3;
  std::string describe() const;
};

// Parse the flag forms above; throw Error "<what>: …" naming the bad text.
HookSpec parse_hook(std::string_view text, std::string_view what);
ProbeSpec parse_probe(std::string_view text, std::string_view what);

// Splits a command line on blanks, honouring '…' and "…" quoting (no other shell syntax).
// Throws Error naming `what` on an unterminated quote or an empty command.
std::vector<std::string> split_command(std::string_view text, std::string_view what);

// Replaces {port}, {ip} and {name} in each argument.
std::vector<std::string> expand_template(const std::vector<std::string>& argv,
                                         const std::string& ip, uint16_t port,
                                         const std::string& name);

}  // namespace zerodrop::lab
