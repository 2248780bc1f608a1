#include "verify/dry_run.h"

#include <fmt/format.h>

#include "verify/anchor.h"
#include "verify/yaml_out.h"

namespace zerodrop::verify {
namespace {

std::string action_text(const Options& o) {
  switch (o.action) {
    case Action::restart:
      return "restart: PATCH deploy/" + o.deployment
             + " (strategic merge: the pod template's kubectl.kubernetes.io/restartedAt)";
    case Action::set_image:
      return fmt::format("set-image: PATCH deploy/{} (strategic merge: container {}'s image to {})",
                         o.deployment, o.set_image.container, o.set_image.image);
    case Action::watch:
      break;
  }
  return "watch: wait for a new generation of deploy/" + o.deployment + " made by someone else";
}

void plan(std::ostream& out, const Options& o, const Target& target,
          const std::optional<AgentJob>& job) {
  out << fmt::format("# zerodrop verify --dry-run: deploy/{} in namespace {} (Kubernetes {})\n",
                     o.deployment, o.namespace_name, target.server_version);
  out << fmt::format("# action:   {}\n", action_text(o));
  out << fmt::format("# service:  {} (pods: {})\n", target.service, target.pod_selector);
  if (job) {
    out << fmt::format(
        "# agents:   {} ({}), {:g} requests/s each, {:g}/s together, to Service {} path {}\n",
        job->count, job->per_node ? "one per node" : "--agents", job->rate, job->rate * job->count,
        job->service, job->path);
  } else {
    out << "# agents:   none (--agents none)\n";
  }
  for (const std::string& url : o.urls) {
    out << fmt::format("# --url:    {} at {:g} requests/s from this machine\n", url, o.load.rate);
  }
  out << fmt::format("# times:    warm-up {}, rollout timeout {}, tail {}\n",
                     format_duration(o.warmup), format_duration(o.rollout_timeout),
                     format_duration(o.tail));
  out << (job ? "# creates:  the two objects below; nothing was created\n"
              : "# creates:  nothing (no agents); nothing was created\n");
}

}  // namespace

void print_dry_run(std::ostream& out, const Options& o, const Target& target,
                   const std::optional<AgentJob>& job) {
  plan(out, o, target, job);
  if (!job) {
    return;
  }
  nlohmann::json anchor = anchor_manifest(o.namespace_name, job->run_id, o.deployment);
  AgentJob owned = *job;
  owned.owner = anchor_reference(anchor["metadata"]["name"].get<std::string>(),
                                 "(the anchor's uid, once created)");
  out << "---\n" << to_yaml(anchor) << "---\n" << to_yaml(agent_job_manifest(owned));
}

}  // namespace zerodrop::verify
