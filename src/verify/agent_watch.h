#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/duration.h"
#include "load/load.h"
#include "verify/agent.h"

namespace zerodrop::verify {

// One Service an agent of `zerodrop watch` probes, as the watcher's answer names it.
struct ProbeTarget {
  std::string svc;      // "NAMESPACE/NAME": the key the watcher files the lines under
  std::string service;  // NAME[:PORTNAME]: the service-link variables, preferred when set
  std::string url;      // http://CLUSTER-IP:PORT/PATH: used when the variables are not set
  std::string path = "/";
  double rate = 5;  // this agent's requests per second to it
  // http1: a new connection per request. http2 (h2c by prior knowledge) and grpc: kept-alive
  // connections as a real client holds them, a new one after a GOAWAY, a request refused
  // unprocessed resent once (load's Http2Session).
  load::Protocol protocol = load::Protocol::http1;
  std::string grpc_method;  // grpc: "/pkg.Service/Method", called with an empty message
  // Sent as the Host header ("" = the URL's): an Ingress route, probed through the ingress
  // controller's Service (url) with the route's host.
  std::string host;

  bool operator==(const ProbeTarget&) const = default;
};

// The protocol's name in the watcher's answer: "http1", "http2", "grpc"; and back (nullopt for
// any other name).
std::string_view protocol_name(load::Protocol protocol);
std::optional<load::Protocol> protocol_named(std::string_view name);

// The watcher's answer to a report: {"targets":[{"svc","service","url","path","rate",
// "protocol","method","host"}]} ("protocol" absent: http1). Throws Error naming what is malformed.
std::vector<ProbeTarget> parse_probe_targets(std::string_view body);
// The answer's text, as parse_probe_targets reads it.
std::string probe_targets_json(const std::vector<ProbeTarget>& targets);

// The report body: for each target, a line {"k":"target","svc":…} (with "error" when its engine
// could not start) followed by that target's agent-stream lines. The watcher splits it back
// with split_report.
struct ReportPart {
  std::string svc;
  std::string error;
  std::string lines;  // whole lines, each ending in '\n'
};

std::string report_body(const std::vector<ReportPart>& parts);
std::vector<ReportPart> split_report(std::string_view body);

// `zerodrop verify-agent --watcher URL`: an agent of watch's DaemonSet. Every `every` it POSTs
// what its engines wrote since the last report to URL/agent/v1/report?pod=P&node=N (HTTP/1.1,
// NDJSON, see report_body) and reads the targets from the answer: one load engine per target at
// the target's rate, each writing verify's agent stream (hello, bucket, req, summary, bye).
// Lines the watcher did not take stay queued (at most 4 MiB per target; older ones are dropped
// and the watcher sees the gap in their numbers). Runs until `base.stop`; returns the exit code.
struct WatchAgentOptions {
  std::string watcher;  // http://HOST:PORT
  AgentOptions base;    // pod, node, load (timeout, headers), records, stop
  Duration every = std::chrono::seconds(1);
};

int run_watch_agent(const WatchAgentOptions& options);

}  // namespace zerodrop::verify
