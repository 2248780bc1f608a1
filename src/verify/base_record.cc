#include "verify/base_record.h"

#include <stdlib.h>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::verify {

std::string make_run_folder(const std::string& out) {
  if (!out.empty()) {
    return out;
  }
  std::string pattern = "/tmp/zerodrop-verify-run.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw Error("cannot create a run folder under /tmp");
  }
  return pattern;
}

record::RunRecord base_record(const Options& o, const Target& target,
                              const std::vector<std::string>& agent_nodes) {
  record::RunRecord run;
  run.engine = "verify";
  run.scenario = target.scenario;
  auto& extra = run.scenario.extra;
  extra["namespace"] = o.namespace_name;
  extra["deployment"] = o.deployment;
  extra["service"] = target.service;
  extra["server_version"] = target.server_version;
  std::string urls;
  for (const std::string& u : o.urls) {
    urls += (urls.empty() ? "" : " ") + u;
  }
  extra["urls"] = urls;
  std::string routers = urls.empty() ? "" : "edge: the --url load from this machine";
  for (const std::string& node : agent_nodes) {
    routers +=
        fmt::format("{}node/{}: the agent on node {}", routers.empty() ? "" : "; ", node, node);
  }
  extra["routers"] = routers;
  if (o.agents != AgentMode::none) {
    extra["agents"] = fmt::format("{} ({})", agent_nodes.size(),
                                  o.agents == AgentMode::per_node ? "one per node" : "--agents");
    extra["agent_image"] = o.agent_image;
  }
  return run;
}

}  // namespace zerodrop::verify
