#include "verify/preflight.h"

#include <cctype>
#include <tuple>

#include <fmt/format.h>

#include "audit/audit.h"
#include "base/error.h"
#include "kube/loader.h"
#include "kube/pre_stop.h"
#include "kube/serving.h"

namespace zerodrop::verify {
namespace {

using nlohmann::json;

json get_json(const ApiClient& client, const std::string& target, const std::string& what) {
  ApiResponse response = client.get(target);
  if (response.status == 404) {
    throw Error(fmt::format("{} not found", what));
  }
  if (!response.ok()) {
    throw Error(fmt::format("cannot get {}: {}", what, error_text(response)));
  }
  auto body = json::parse(response.body, nullptr, false);
  if (!body.is_object()) {
    throw Error(fmt::format("cannot get {}: the API server's answer is not JSON", what));
  }
  return body;
}

// "1.30" from /version's major and minor ("30+" on some providers); "" when absent.
std::string minor_version(const json& version) {
  std::string major = version.value("major", ""), minor = version.value("minor", "");
  while (!minor.empty() && !std::isdigit(static_cast<unsigned char>(minor.back()))) {
    minor.pop_back();
  }
  return major.empty() || minor.empty() ? "" : major + "." + minor;
}

std::pair<std::string, std::string> check_server(const ApiClient& client) {
  ApiResponse version = client.get("/version");
  if (!version.ok()) {
    throw Error(fmt::format("the API server does not answer: {}", error_text(version)));
  }
  auto body = json::parse(version.body, nullptr, false);
  std::string text = body.is_object() ? body.value("gitVersion", "") : "";
  std::string minor = body.is_object() ? minor_version(body) : "";
  if (!client.get("/apis/discovery.k8s.io/v1").ok()) {
    throw Error(
        fmt::format("the API server ({}) does not serve discovery.k8s.io/v1 "
                    "(EndpointSlices, Kubernetes 1.21 or later)",
                    text.empty() ? "unknown version" : text));
  }
  return {text, minor};
}

void check_permissions(const ApiClient& client, const PreflightOptions& options) {
  auto missing = missing_permissions(client, options.namespace_name,
                                     needed_permissions(options.action, options.agents));
  if (missing.empty()) {
    return;
  }
  std::string list;
  for (const Permission& p : missing) {
    list += (list.empty() ? "" : ", ") + p.text();
  }
  throw Error(
      fmt::format("missing permissions in namespace {}: {} (--print-rbac prints the "
                  "Role needed)",
                  options.namespace_name, list));
}

const json& labels_of(const json& object) {
  static const json kEmpty = json::object();
  auto& meta = object.contains("metadata") ? object["metadata"] : kEmpty;
  return meta.contains("labels") && meta["labels"].is_object() ? meta["labels"] : kEmpty;
}

// Whether a Service's selector picks pods with these labels (an empty selector picks none).
bool selects(const json& service, const json& pod_labels) {
  auto spec = service.value("spec", json::object());
  auto selector = spec.value("selector", json::object());
  if (!selector.is_object() || selector.empty()) {
    return false;
  }
  for (const auto& [key, value] : selector.items()) {
    if (!pod_labels.contains(key) || pod_labels[key] != value) {
      return false;
    }
  }
  return true;
}

json find_service(const ApiClient& client, const PreflightOptions& o, const json& pod_labels) {
  std::string where = fmt::format("in namespace {}", o.namespace_name);
  if (!o.service.empty()) {
    json service = get_json(
        client, fmt::format("/api/v1/namespaces/{}/services/{}", o.namespace_name, o.service),
        fmt::format("service {} {}", o.service, where));
    if (!selects(service, pod_labels)) {
      throw Error(
          fmt::format("service {} does not select the pods of deploy/{}", o.service, o.deployment));
    }
    return service;
  }
  json list = get_json(client, fmt::format("/api/v1/namespaces/{}/services", o.namespace_name),
                       "services " + where);
  std::vector<json> found;
  for (const json& s : list.value("items", json::array())) {
    if (selects(s, pod_labels)) {
      found.push_back(s);
    }
  }
  if (found.empty()) {
    throw Error(
        fmt::format("no Service {} selects the pods of deploy/{}: create one, or name "
                    "it with --service",
                    where, o.deployment));
  }
  if (found.size() > 1) {
    std::string names;
    for (const json& s : found) {
      names += (names.empty() ? "" : ", ") + s["metadata"].value("name", "");
    }
    throw Error(
        fmt::format("several Services {} select the pods of deploy/{} ({}): choose one "
                    "with --service",
                    where, o.deployment, names));
  }
  return found.front();
}

// The first container's preStop straight from the JSON, for a Deployment the strict loader
// refuses (then the audit's warnings carry the loader's words): native sleep and exec commands.
void read_template_json(const json& deployment, Target& target) {
  json containers = deployment.value("spec", json::object())
                        .value("template", json::object())
                        .value("spec", json::object())
                        .value("containers", json::array());
  if (!containers.is_array() || containers.empty() || !containers[0].is_object()) {
    throw Error("the live Deployment has no containers");
  }
  const json& c = containers[0];
  target.pod_template.container = c.value("name", "");
  json hook = c.value("lifecycle", json::object()).value("preStop", json::object());
  target.pod_template.has_prestop = hook.is_object() && !hook.empty();
  target.pod_template.prestop = Duration::zero();
  if (target.pod_template.has_prestop) {
    kube::Handler handler;
    if (hook.contains("sleep")) {
      handler.kind = kube::HandlerKind::sleep;
      handler.sleep_seconds = hook["sleep"].value("seconds", int64_t{0});
    } else {
      handler.kind = kube::HandlerKind::exec;
      handler.command =
          hook.value("exec", json::object()).value("command", std::vector<std::string>{});
    }
    target.pod_template.prestop = kube::pre_stop_delay(handler).delay;
  }
  target.scenario.container = target.pod_template.container;
}

}  // namespace

void read_template(const json& deployment, Target& target) {
  kube::Loaded loaded = kube::load_text(deployment.dump(), "deploy (live)");
  for (const kube::Object& object : loaded.objects) {
    const auto* workload = std::get_if<kube::Workload>(&object);
    if (!workload || workload->containers.empty()) {
      continue;
    }
    const kube::Container& c = kube::serving_container(*workload, "");
    target.pod_template.container = c.name;
    target.pod_template.has_prestop = c.pre_stop.has_value();
    target.pod_template.prestop = c.pre_stop ? kube::pre_stop_delay(*c.pre_stop).delay
                                             : std::optional<Duration>(Duration::zero());
    record::Scenario& s = target.scenario;
    if (workload->replicas) {
      s.replicas = static_cast<int>(*workload->replicas);
    }
    s.grace = std::chrono::seconds(workload->grace_seconds());
    s.max_surge = workload->strategy.max_surge;
    s.max_unavailable = workload->strategy.max_unavailable;
    s.container = c.name;
    s.prestop = record::PreStop{c.pre_stop ? kube::pre_stop_delay(*c.pre_stop).how : "none",
                                target.pod_template.prestop};
    return;
  }
  read_template_json(deployment, target);
}

std::string selector_query(const json& selector) {
  std::vector<std::string> terms;
  json labels = selector.value("matchLabels", json::object());  // items() outlives no temporary
  for (const auto& [key, value] : labels.items()) {
    terms.push_back(fmt::format("{}={}", key, value.is_string() ? value.get<std::string>() : ""));
  }
  for (const json& e : selector.value("matchExpressions", json::array())) {
    std::string key = e.value("key", ""), op = e.value("operator", "");
    std::string values;
    for (const json& v : e.value("values", json::array())) {
      values += (values.empty() ? "" : ",") + (v.is_string() ? v.get<std::string>() : "");
    }
    if (op == "In" || op == "NotIn") {
      terms.push_back(fmt::format("{} {} ({})", key, op == "In" ? "in" : "notin", values));
    } else if (op == "Exists" || op == "DoesNotExist") {
      terms.push_back(op == "Exists" ? key : "!" + key);
    } else {
      throw Error(fmt::format("the Deployment's selector has an unknown operator '{}'", op));
    }
  }
  std::string query;
  for (const std::string& t : terms) {
    query += (query.empty() ? "" : ",") + t;
  }
  return query;
}

std::vector<std::string> audit_live(const json& deployment, const json& service) {
  kube::Loaded loaded = kube::load_text(deployment.dump() + "\n" + service.dump(), "live");
  audit::Report report = audit::audit_objects(std::move(loaded.objects), loaded.problems, {});
  std::vector<std::string> lines;
  report.each_finding([&](const audit::Finding& f) {
    if (f.severity != audit::Severity::info) {
      lines.push_back(fmt::format("{} [{}]: {}", f.rule,
                                  f.hole ? std::string(record::to_string(*f.hole)) : "-",
                                  f.message));
    }
  });
  return lines;
}

Target preflight(const ApiClient& client, const PreflightOptions& o) {
  Target target;
  std::tie(target.server_version, target.k8s_version) = check_server(client);
  check_permissions(client, o);
  target.deployment = get_json(
      client,
      fmt::format("/apis/apps/v1/namespaces/{}/deployments/{}", o.namespace_name, o.deployment),
      fmt::format("deployment {} in namespace {}", o.deployment, o.namespace_name));
  const json& spec = target.deployment.value("spec", json::object());
  target.pod_selector = selector_query(spec.value("selector", json::object()));
  if (target.pod_selector.empty()) {
    throw Error(fmt::format("deploy/{} has an empty selector", o.deployment));
  }
  json pod_labels = labels_of(spec.value("template", json::object()));
  json service = find_service(client, o, pod_labels);
  target.service = service["metadata"].value("name", "");
  read_template(target.deployment, target);
  if (!target.k8s_version.empty()) {
    target.scenario.k8s_version = target.k8s_version;
  }
  target.warnings = audit_live(target.deployment, service);
  return target;
}

}  // namespace zerodrop::verify
