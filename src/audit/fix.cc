// --fix: patches that close a workload's holes: strategic merge for built-in kinds, an RFC 6902
// JSON patch for custom resources (fix_json_patch.h). Written as YAML text by hand: the output
// carries comments (what each patch closes, how to apply it) that an emitter cannot place.
#include <algorithm>
#include <ostream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/fix_copy_in.h"
#include "audit/fix_json_patch.h"
#include "audit/output.h"
#include "audit/pre_stop.h"
#include "audit/readiness_fix.h"
#include "audit/rule.h"
#include "audit/rules.h"
#include "base/error.h"
#include "base/text.h"

namespace zerodrop::audit {
namespace {

using kube::Container;
using kube::Workload;
namespace id = rule_id;

// A YAML double-quoted scalar (JSON string syntax is valid YAML).
std::string quote(std::string_view text) {
  return nlohmann::json(text).dump();
}

std::string_view handler_key(kube::HandlerKind kind) {
  return kube::to_string(kind);
}

struct Plan {
  std::vector<std::string> closes;
  std::vector<std::string> notes;
  std::map<std::string, std::vector<std::string>> container_lines;  // by container name
  std::vector<std::string> spec_lines;                              // under spec:
  std::vector<std::string> pod_spec_lines;                          // under the pod spec
  std::vector<std::string> extra_docs;                              // HPA and PDB patches, new PDBs
  std::vector<std::string> copy_in;  // containers whose exec sleep may need zerodrop copied in
};

void add(std::vector<std::string>& lines, std::initializer_list<std::string> more) {
  lines.insert(lines.end(), more);
}

// Lines (relative to the container item) that set the preStop delay to `seconds`.
std::vector<std::string> pre_stop_lines(const Container& c, int64_t seconds, const Options& o,
                                        Plan& plan) {
  std::vector<std::string> lines = {"lifecycle:", "  preStop:"};
  kube::HandlerKind kind =
      o.kube_version.has_native_sleep() ? kube::HandlerKind::sleep : kube::HandlerKind::exec;
  if (c.pre_stop && c.pre_stop->kind != kind) {
    lines.push_back(fmt::format("    {}: null", handler_key(c.pre_stop->kind)));
  }
  if (kind == kube::HandlerKind::sleep) {
    add(lines, {"    sleep:", fmt::format("      seconds: {}", seconds)});
    return lines;
  }
  std::string program = shell_less_image(c.image) ? "/zerodrop" : "sleep";
  plan.copy_in.push_back(c.name);
  if (program == "/zerodrop") {
    plan.notes.push_back(
        fmt::format("container '{}': copy the static zerodrop binary to "
                    "/zerodrop in the image (no sleep in {}; docs/run.md, zerodrop sleep), or "
                    "let an init container copy it in: the advice below",
                    c.name, c.image));
    add(lines,
        {"    exec:", fmt::format("      command: [\"/zerodrop\", \"sleep\", \"{}\"]", seconds)});
  } else {
    // Nothing in the image's name says whether it has a sleep program: say so.
    plan.notes.push_back(fmt::format(
        "container '{}': exec sleep needs a sleep program in {} (Kubernetes {}.{} has no native "
        "sleep); if it has none, copy the static zerodrop in: the advice below does it with an "
        "init container (zerodrop copy-self; docs/run.md)",
        c.name, c.image, o.kube_version.major, o.kube_version.minor));
    add(lines, {"    exec:", fmt::format("      command: [\"sleep\", \"{}\"]", seconds)});
  }
  return lines;
}

// Lines (relative to the container item) of a handler under a probe or hook key.
std::vector<std::string> handler_lines(const kube::Handler& h) {
  auto port = [&] {
    return "    port: " + (h.port.named() ? quote(h.port.name) : std::to_string(h.port.number));
  };
  switch (h.kind) {
    case kube::HandlerKind::http_get: {
      std::vector<std::string> lines = {
          "  httpGet:", "    path: " + quote(h.path.empty() ? "/" : h.path), port()};
      if (h.scheme == "HTTPS") {
        lines.push_back("    scheme: HTTPS");
      }
      return lines;
    }
    case kube::HandlerKind::tcp_socket:
      return {"  tcpSocket:", port()};
    case kube::HandlerKind::grpc:
      return h.path.empty()
                 ? std::vector<std::string>{"  grpc:", port()}
                 : std::vector<std::string>{"  grpc:", port(), "    service: " + quote(h.path)};
    case kube::HandlerKind::exec:
      return {"  exec:", "    command: " + nlohmann::json(h.command).dump()};
    case kube::HandlerKind::sleep:
      break;
  }
  return {};
}

// A readiness probe only when the container proves it passes it; otherwise not patched (the
// finding's fix, with its <…> placeholders, goes to the notes).
bool plan_readiness(const Finding& f, const WorkloadView& view, size_t index,
                    std::vector<std::string>& lines) {
  const Container& c = view.workload->containers[index];
  bool replacing = f.rule == id::kReadinessTcpOnHttp;
  ReadinessProposal p =
      propose_readiness(view, index, replacing ? &c.readiness_probe->handler : nullptr);
  if (!p.handler) {
    return false;
  }
  add(lines, {"readinessProbe:"});
  if (replacing || (c.readiness_probe && c.readiness_probe->handler.kind != p.handler->kind)) {
    lines.push_back(fmt::format("  {}: null", handler_key(c.readiness_probe->handler.kind)));
  }
  auto more = handler_lines(*p.handler);
  lines.insert(lines.end(), more.begin(), more.end());
  return true;
}

// The container-level part of the plan for one finding; returns false if not patched.
bool plan_container(const Finding& f, const WorkloadView& view, size_t index, const Options& o,
                    Plan& plan) {
  const Container& c = view.workload->containers[index];
  auto& lines = plan.container_lines[c.name];
  if (f.rule == id::kPreStopMissing || f.rule == id::kPreStopTooShort
      || f.rule == id::kPreStopBinaryMissing) {
    auto more = pre_stop_lines(c, wanted_pre_stop_seconds(o), o, plan);
    lines.insert(lines.end(), more.begin(), more.end());
    return true;
  }
  if (f.rule == id::kReadinessMissing || f.rule == id::kReadinessTcpOnHttp) {
    return plan_readiness(f, view, index, lines);
  }
  if (f.rule == id::kLivenessAggressive) {
    const kube::Probe& live = *c.liveness_probe;
    add(lines,
        {"livenessProbe:",
         fmt::format("  periodSeconds: {}", std::max<int64_t>(live.period_seconds, 10)),
         fmt::format("  failureThreshold: {}", std::max<int64_t>(live.failure_threshold, 3))});
    return true;
  }
  return false;
}

std::string labels_yaml(const kube::Labels& labels, int indent) {
  std::string out;
  for (const auto& [k, v] : labels) {
    out += fmt::format("{}{}: {}\n", std::string(indent, ' '), quote(k), quote(v));
  }
  return out;
}

std::string namespace_line(const kube::Meta& meta) {
  return meta.namespace_name.empty() ? "" : "  namespace: " + quote(meta.namespace_name) + "\n";
}

// The comment heading a patch document: the command that applies it to `meta`'s object, with
// FILE standing for the document saved on its own.
std::string apply_line(const kube::Meta& meta, PatchType type) {
  auto slash = meta.api_version.find('/');
  std::string group = slash == std::string::npos ? "" : "." + meta.api_version.substr(0, slash);
  std::string kind = ascii_lower(meta.kind);
  std::string ns = meta.namespace_name.empty() ? "" : " -n " + meta.namespace_name;
  return fmt::format("# apply: kubectl patch {}{}/{}{} --type={} --patch-file=FILE\n", kind, group,
                     meta.name, ns, to_string(type));
}

void plan_new_pdb(const Workload& w, Plan& plan) {
  const kube::Labels& match =
      w.selector.match_labels.empty() ? w.pod_labels : w.selector.match_labels;
  plan.extra_docs.push_back(fmt::format(
      "# a new object\n# apply: kubectl apply -f FILE\n"
      "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: {}\n{}spec:\n  "
      "maxUnavailable: 1\n  selector:\n    matchLabels:\n{}",
      quote(w.meta.name + "-pdb"), namespace_line(w.meta), labels_yaml(match, 6)));
}

bool plan_capacity(const Finding& f, const WorkloadView& view, Plan& plan) {
  const Workload& w = *view.workload;
  if (f.rule == id::kMaxUnavailable) {
    bool rollout = w.kind == kube::WorkloadKind::rollout;
    add(plan.spec_lines, {"strategy:", rollout ? "  canary:" : "  rollingUpdate:",
                          "    maxUnavailable: 0", "    maxSurge: 1"});
    return true;
  }
  if (f.rule == id::kAllUnavailable) {
    add(plan.spec_lines, {"updateStrategy:", "  rollingUpdate:", "    maxUnavailable: 1"});
    return true;
  }
  if (f.rule == id::kTooFewReplicas && w.kind != kube::WorkloadKind::pod) {
    if (!w.replicas && view.hpa) {
      const auto& h = view.hpa->meta;
      plan.extra_docs.push_back(fmt::format(
          "{}apiVersion: {}\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: {}\n{}spec:\n  "
          "minReplicas: 2\n",
          apply_line(h, patch_type(h)), h.api_version, quote(h.name), namespace_line(h)));
    } else {
      add(plan.spec_lines, {"replicas: 2"});
    }
    if (view.pdbs.empty()) {
      plan_new_pdb(w, plan);  // two replicas are worth guarding against a drain
    }
    return true;
  }
  return false;
}

bool plan_pdb(const Finding& f, const WorkloadView& view, Plan& plan) {
  const Workload& w = *view.workload;
  if (f.rule == id::kPdbMissing) {
    plan_new_pdb(w, plan);
    return true;
  }
  if (f.rule == id::kPdbBlocksEviction && view.replica_floor() >= 2) {
    for (const kube::PodDisruptionBudget* p : view.pdbs) {
      if (p->meta.file == f.file) {
        plan.extra_docs.push_back(fmt::format(
            "{}apiVersion: {}\nkind: PodDisruptionBudget\nmetadata:\n  name: {}\n{}spec:\n  "
            "minAvailable: null\n  maxUnavailable: 1\n",
            apply_line(p->meta, patch_type(p->meta)), p->meta.api_version, quote(p->meta.name),
            namespace_line(p->meta)));
        return true;
      }
    }
  }
  return false;
}

// The grace period the patched pod needs: above the longest patched or existing preStop of the
// main containers, plus that of the native sidecars, which stop only after them.
void plan_grace(const AuditedWorkload& a, const Options& o, Plan& plan) {
  const Workload& w = *a.view.workload;
  double main = 0;
  double sidecar = 0;
  for (const Container& c : w.containers) {
    bool patched = plan.container_lines.count(c.name) && !plan.container_lines[c.name].empty()
                   && plan.container_lines[c.name].front() == "lifecycle:";
    double delay = patched      ? static_cast<double>(wanted_pre_stop_seconds(o))
                   : c.pre_stop ? delay_seconds(pre_stop_delay(*c.pre_stop)).value_or(0)
                                : 0;
    double& phase = c.sidecar ? sidecar : main;
    phase = std::max(phase, delay);
  }
  double longest = main + sidecar;
  double drain = to_seconds(o.drain);
  try {
    drain = drain_of(w, o).seconds;
  } catch (const Error&) {
  }
  int64_t grace = std::max(w.grace_seconds(), wanted_grace_seconds(longest, drain, o));
  for (const Container& c : w.containers) {
    if (c.pre_stop && c.pre_stop->kind == kube::HandlerKind::sleep) {
      grace = std::max(grace, c.pre_stop->sleep_seconds + 1);
    }
  }
  if (grace != w.grace_seconds()) {
    plan.pod_spec_lines.push_back(fmt::format("terminationGracePeriodSeconds: {}", grace));
  }
}

std::optional<size_t> container_named(const Workload& w, const std::string& name) {
  for (size_t i = 0; i < w.containers.size(); ++i) {
    if (w.containers[i].name == name) {
      return i;
    }
  }
  return std::nullopt;
}

Plan make_plan(const AuditedWorkload& a, const Options& o) {
  Plan plan;
  const Workload& w = *a.view.workload;
  for (const Finding& f : a.findings) {
    auto c = container_named(w, f.object.container);
    bool done = (!f.object.container.empty() && c && plan_container(f, a.view, *c, o, plan))
                || plan_capacity(f, a.view, plan) || plan_pdb(f, a.view, plan)
                || f.rule == id::kGraceTooShort || f.rule == id::kSleepNotBelowGrace;
    std::string who = f.object.container.empty() ? "" : " (" + f.object.container + ")";
    if (done) {
      plan.closes.push_back(fmt::format("{}{}", f.rule, who));
    } else if (f.severity != Severity::info) {
      plan.notes.push_back(fmt::format("not patched: {}{}: {}", f.rule, who, f.fix));
    }
  }
  if (!plan.closes.empty()) {
    plan_grace(a, o, plan);
  }
  return plan;
}

void write_lines(const std::vector<std::string>& lines, int indent, std::ostream& out) {
  for (const std::string& line : lines) {
    out << std::string(indent, ' ') << line << '\n';
  }
}

void write_containers(const Workload& w, const Plan& plan, int indent, std::ostream& out) {
  for (bool sidecars : {false, true}) {
    bool header = false;
    for (const Container& c : w.containers) {
      auto it = plan.container_lines.find(c.name);
      if (c.sidecar != sidecars || it == plan.container_lines.end() || it->second.empty()) {
        continue;
      }
      if (!header) {
        out << std::string(indent, ' ') << (sidecars ? "initContainers:" : "containers:") << '\n';
        header = true;
      }
      out << std::string(indent + 2, ' ') << "- name: " << quote(c.name) << '\n';
      write_lines(it->second, indent + 4, out);
    }
  }
}

void write_workload_patch(const AuditedWorkload& a, const Plan& plan, std::ostream& out) {
  const Workload& w = *a.view.workload;
  out << "---\n";
  out << fmt::format("# zerodrop --fix: {} {} ({}:{})\n", w.meta.kind, w.meta.name, w.meta.file,
                     w.meta.marks.self.line);
  out << fmt::format("# closes: {}\n", fmt::join(plan.closes, ", "));
  for (const std::string& note : plan.notes) {
    out << "# " << note << '\n';
  }
  if (w.kind == kube::WorkloadKind::pod) {
    out << "# a Pod's containers cannot change in place: patch its manifest, then recreate it\n";
  }
  PatchType type = patch_type(w.meta);
  out << apply_line(w.meta, type);
  if (type == PatchType::json) {
    std::vector<std::string> ops =
        json_patch_ops(w, {plan.container_lines, plan.spec_lines, plan.pod_spec_lines});
    for (const std::string& op : ops) {
      out << "- " << op << '\n';
    }
    if (ops.empty()) {
      out << "[]\n";  // only the extra documents below change anything
    }
    return;
  }
  out << fmt::format("apiVersion: {}\nkind: {}\nmetadata:\n  name: {}\n", w.meta.api_version,
                     w.meta.kind, quote(w.meta.name));
  if (!w.meta.namespace_name.empty()) {
    out << "  namespace: " << quote(w.meta.namespace_name) << '\n';
  }
  bool pod_part = !plan.pod_spec_lines.empty()
                  || std::any_of(plan.container_lines.begin(), plan.container_lines.end(),
                                 [](const auto& entry) { return !entry.second.empty(); });
  if (plan.spec_lines.empty() && !pod_part) {
    out << "spec: {}\n";
    return;
  }
  out << "spec:\n";
  write_lines(plan.spec_lines, 2, out);
  if (!pod_part) {
    return;
  }
  int indent = 2;
  if (w.kind != kube::WorkloadKind::pod) {
    out << "  template:\n    spec:\n";
    indent = 6;
  }
  write_lines(plan.pod_spec_lines, indent, out);
  write_containers(w, plan, indent, out);
}

void write_patch(const AuditedWorkload& a, const Options& options, std::ostream& out) {
  Plan plan = make_plan(a, options);
  if (plan.closes.empty() && plan.notes.empty()) {
    return;
  }
  if (plan.closes.empty()) {
    const auto& meta = a.view.workload->meta;
    out << fmt::format("# zerodrop --fix: {} {} ({}:{}): nothing to patch\n", meta.kind, meta.name,
                       meta.file, meta.marks.self.line);
    for (const std::string& note : plan.notes) {
      out << "# " << note << '\n';
    }
    return;
  }
  write_workload_patch(a, plan, out);
  if (!plan.copy_in.empty()) {
    const kube::Meta& meta = a.view.workload->meta;
    out << "---\n"
        << copy_in_advice(*a.view.workload, plan.copy_in, wanted_pre_stop_seconds(options),
                          patch_type(meta), apply_line(meta, patch_type(meta)));
  }
  for (const std::string& doc : plan.extra_docs) {
    out << "---\n" << doc;
  }
}

// Patches to `out`; the summary (and nothing for input problems, which have no fix) to `err`.
class PatchSink : public Sink {
public:
  PatchSink(const Options& options, std::ostream& out, std::ostream* err)
      : options_(options), out_(out), err_(err) {}

  void problem(const Finding&) override {}

  void workload(const AuditedWorkload& w) override { write_patch(w, options_, out_); }

  void finish(const Summary& summary) override {
    if (err_ != nullptr) {
      *err_ << summary_line(summary) << '\n';
    }
  }

private:
  const Options& options_;
  std::ostream& out_;
  std::ostream* err_;
};

}  // namespace

std::unique_ptr<Sink> patch_sink(const Options& options, std::ostream& out, std::ostream& err) {
  return std::make_unique<PatchSink>(options, out, &err);
}

void write_patches(const Report& report, const Options& options, std::ostream& out) {
  PatchSink sink(options, out, nullptr);
  report.replay(sink);
}

}  // namespace zerodrop::audit
