#include "kubeapi/jobs.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "base/error.h"
#include "kubeapi/selector.h"

namespace zerodrop::kubeapi {

using nlohmann::json;

namespace {

json job_condition(const std::string& type, bool status, const std::string& at,
                   const std::string& reason = "", const std::string& message = "") {
  json c = {{"type", type}, {"status", status ? "True" : "False"}, {"lastTransitionTime", at}};
  if (!reason.empty()) {
    c["reason"] = reason;
    c["message"] = message;
  }
  return c;
}

int count_or(const json& spec, const char* key, int fallback, const std::string& what) {
  if (!spec.contains(key) || spec[key].is_null()) {
    return fallback;
  }
  if (!spec[key].is_number_integer() || spec[key].get<int64_t>() < 0) {
    throw Error(fmt::format("{}.spec.{}: must be a whole number of at least 0", what, key));
  }
  return spec[key].get<int>();
}

// "0-2,4" for indexes {0,1,2,4}: the API's completedIndexes.
std::string index_ranges(const std::set<int>& indexes) {
  std::string out;
  for (auto it = indexes.begin(); it != indexes.end();) {
    int first = *it;
    int last = first;
    for (++it; it != indexes.end() && *it == last + 1; ++it) {
      last = *it;
    }
    out += (out.empty() ? "" : ",")
           + (first == last ? std::to_string(first) : fmt::format("{}-{}", first, last));
  }
  return out;
}

bool node_matches(const Node& node, const json& node_selector) {
  std::map<std::string, std::string> labels = {{"kubernetes.io/hostname", node.name},
                                               {"kubernetes.io/os", "linux"}};
  for (const auto& [key, value] : node_selector.items()) {
    auto it = labels.find(key);
    if (it == labels.end() || !value.is_string() || it->second != value.get<std::string>()) {
      return false;
    }
  }
  return true;
}

bool holds_node(const json& pod, const std::string& node) {
  std::string phase = pod["status"].value("phase", "");
  return pod["spec"].value("nodeName", "") == node && phase != "Succeeded" && phase != "Failed";
}

// The selectors of the required anti-affinity terms on kubernetes.io/hostname (the only
// topology the lab's nodes have).
std::vector<Selector> anti_affinity(const json& spec) {
  std::vector<Selector> out;
  json terms = spec.value("affinity", json::object())
                   .value("podAntiAffinity", json::object())
                   .value("requiredDuringSchedulingIgnoredDuringExecution", json::array());
  for (const json& term : terms) {
    if (term.value("topologyKey", "") == "kubernetes.io/hostname") {
      out.push_back(
          Selector::parse(selector_text(term.value("labelSelector", json::object())), ""));
    }
  }
  return out;
}

// A service link variable's prefix: "my-svc" -> "MY_SVC".
std::string env_name(const std::string& service) {
  std::string out;
  for (char c : service) {
    out += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

// The Service's address on `node`: its router there (the lab's annotation), else its ClusterIP
// and first port; empty when it has neither (a client's Service without a spec).
std::pair<std::string, std::string> service_address(const json& service, const Node& node) {
  const json& meta = service.value("metadata", json::object());
  json annotations = meta.value("annotations", json::object());
  std::string routers = annotations.is_object() && annotations.contains("zerodrop.dev/node-routers")
                                && annotations["zerodrop.dev/node-routers"].is_string()
                            ? annotations["zerodrop.dev/node-routers"].get<std::string>()
                            : "";
  std::string key = node.name + "=";
  for (size_t at = 0; at < routers.size();) {
    size_t comma = routers.find(',', at);
    std::string part = routers.substr(at, comma == std::string::npos ? comma : comma - at);
    if (part.rfind(key, 0) == 0) {
      std::string address = part.substr(key.size());
      size_t colon = address.rfind(':');
      return {address.substr(0, colon), address.substr(colon + 1)};
    }
    at = comma == std::string::npos ? routers.size() : comma + 1;
  }
  json spec = service.value("spec", json::object());
  json ports = spec.is_object() ? spec.value("ports", json::array()) : json::array();
  json ip = spec.is_object() ? spec.value("clusterIP", json("")) : json("");
  if (!ip.is_string() || ip == "" || ip == "None" || !ports.is_array() || ports.empty()
      || !ports[0].is_object() || !ports[0].value("port", json(0)).is_number_integer()) {
    return {"", ""};
  }
  return {ip.get<std::string>(), std::to_string(ports[0]["port"].get<int>())};
}

// A downward API field of the pod: metadata.name, spec.nodeName, metadata.labels['k'], …
std::string field_of(const json& pod, const std::string& path) {
  size_t bracket = path.find("['");
  if (bracket != std::string::npos) {
    std::string map = path.substr(path.find('.') + 1, bracket - path.find('.') - 1);
    std::string key = path.substr(bracket + 2, path.size() - bracket - 4);
    return pod["metadata"].value(map, json::object()).value(key, "");
  }
  size_t dot = path.find('.');
  if (dot == std::string::npos) {
    return "";
  }
  const json& part = pod.value(path.substr(0, dot), json::object());
  json value = part.value(path.substr(dot + 1), json());
  return value.is_string() ? value.get<std::string>() : value.is_null() ? "" : value.dump();
}

// $(VAR) references expanded from `env`; $$ is a literal $.
std::string expand(const std::string& text,
                   const std::vector<std::pair<std::string, std::string>>& env) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    size_t close = text.find(')', i);
    if (text[i] != '$' || i + 1 >= text.size() || text[i + 1] != '('
        || close == std::string::npos) {
      out += text[i];
      continue;
    }
    std::string name = text.substr(i + 2, close - i - 2);
    auto it =
        std::find_if(env.rbegin(), env.rend(), [&](const auto& e) { return e.first == name; });
    out += it == env.rend() ? text.substr(i, close - i + 1) : it->second;
    i = close;
  }
  return out;
}

}  // namespace

json admit_job(json job, const ClusterInfo& info, WallTime now) {
  std::string what = "jobs.batch \"" + job["metadata"].value("name", "") + "\"";
  json& spec = job["spec"];
  if (!spec.is_object() || !spec["template"].is_object() || !spec["template"]["spec"].is_object()) {
    throw Error(what + ": spec.template.spec: Required value");
  }
  json& pod = spec["template"]["spec"];
  if (!pod["containers"].is_array() || pod["containers"].empty()) {
    throw Error(what + ": spec.template.spec.containers: Required value");
  }
  const json& c = pod["containers"][0];
  if (!c.contains("command") && !c.contains("args")) {
    throw Error(what + ": the lab runs a container's command (it has no image entrypoints): "
                "give spec.template.spec.containers[0].command");
  }
  std::string restart = pod.value("restartPolicy", "");
  if (restart != "Never" && restart != "OnFailure") {
    throw Error(what + ": spec.template.spec.restartPolicy: Required value: valid values: "
                "\"OnFailure\", \"Never\"");
  }
  std::string mode = spec.value("completionMode", "NonIndexed");
  if (mode != "NonIndexed" && mode != "Indexed") {
    throw Error(what + ": spec.completionMode: Unsupported value: \"" + mode + "\"");
  }
  if (mode == "Indexed" && !spec.contains("completions")) {
    throw Error(what + ": spec.completions: Required value: when completionMode is Indexed");
  }
  spec["completionMode"] = mode;
  spec["completions"] = count_or(spec, "completions", 1, what);
  spec["parallelism"] = count_or(spec, "parallelism", 1, what);
  spec["backoffLimit"] = count_or(spec, "backoffLimit", 6, what);
  count_or(spec, "activeDeadlineSeconds", 0, what);
  std::string uid = job["metadata"]["uid"].get<std::string>();
  std::string name = job["metadata"]["name"].get<std::string>();
  json labels = {{"batch.kubernetes.io/controller-uid", uid},
                 {"batch.kubernetes.io/job-name", name},
                 {"controller-uid", uid},
                 {"job-name", name}};
  spec["selector"] = {{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}};
  spec["template"]["metadata"]["labels"].update(labels);
  job["metadata"]["labels"] = job["metadata"].value("labels", json::object());
  job["metadata"]["labels"].update(labels);
  job["status"] = {{"active", 0}, {"startTime", rfc3339(now)}};
  if (!job["metadata"].contains("namespace")) {
    job["metadata"]["namespace"] = info.ns;
  }
  return job;
}

json job_pod_object(const json& job, const JobPod& pod, const ClusterInfo& info) {
  const json& tmpl = job["spec"]["template"];
  std::string name = job["metadata"]["name"].get<std::string>();
  json meta = {{"name", pod.name},
               {"namespace", job["metadata"].value("namespace", info.ns)},
               {"uid", uid_of("Pod", pod.name, info.start_wall)},
               {"creationTimestamp", rfc3339(pod.created)},
               {"generateName", name + (pod.index >= 0 ? fmt::format("-{}-", pod.index) : "-")},
               {"labels", tmpl["metadata"].value("labels", json::object())},
               {"annotations", tmpl["metadata"].value("annotations", json::object())}};
  if (pod.index >= 0) {
    meta["labels"]["batch.kubernetes.io/job-completion-index"] = std::to_string(pod.index);
    meta["annotations"]["batch.kubernetes.io/job-completion-index"] = std::to_string(pod.index);
  }
  meta["ownerReferences"] =
      json::array({controller_reference("batch/v1", "Job", name, job["metadata"]["uid"])});
  if (pod.deletion) {
    mark_deleting(meta, *pod.deletion, pod.grace);
  }
  json p = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", meta}, {"spec", tmpl["spec"]}};
  std::string created = rfc3339(pod.created);
  json scheduled = job_condition("PodScheduled", true, created);
  if (pod.node.empty()) {
    p["status"] = {
        {"phase", "Pending"},
        {"conditions", json::array({job_condition("PodScheduled", false, created, "Unschedulable",
                                                  pod.why_unscheduled)})}};
    return p;
  }
  p["spec"]["nodeName"] = pod.node;
  std::string phase = pod.finished  ? (pod.succeeded() ? "Succeeded" : "Failed")
                      : pod.started ? "Running"
                                    : "Pending";
  bool ready = pod.started && !pod.finished;
  json state = {{"waiting", {{"reason", "ContainerCreating"}}}};
  if (pod.finished) {
    int code = pod.exit_code.value_or(pod.signal ? 128 + *pod.signal : 0);
    state = {{"terminated",
              {{"exitCode", code},
               {"reason", code == 0 ? "Completed" : "Error"},
               {"startedAt", rfc3339(pod.started.value_or(pod.created))},
               {"finishedAt", rfc3339(*pod.finished)}}}};
    if (pod.signal) {
      state["terminated"]["signal"] = *pod.signal;
    }
  } else if (pod.started) {
    state = {{"running", {{"startedAt", rfc3339(*pod.started)}}}};
  }
  const json& c = tmpl["spec"]["containers"][0];
  std::string since = rfc3339(pod.finished.value_or(pod.started.value_or(pod.created)));
  p["status"] = {{"phase", phase},
                 {"hostIP", "127.0.0.1"},
                 {"podIP", "127.0.0.1"},
                 {"podIPs", json::array({{{"ip", "127.0.0.1"}}})},
                 {"startTime", created},
                 {"qosClass", "BestEffort"},
                 {"conditions", json::array({scheduled, job_condition("Initialized", true, created),
                                             job_condition("ContainersReady", ready, since),
                                             job_condition("Ready", ready, since)})},
                 {"containerStatuses", json::array({{{"name", c.value("name", "")},
                                                     {"image", c.value("image", "")},
                                                     {"imageID", ""},
                                                     {"ready", ready},
                                                     {"started", ready},
                                                     {"restartCount", 0},
                                                     {"state", state},
                                                     {"lastState", json::object()}}})}};
  return p;
}

Placement schedule(const json& spec, const json& labels, const std::vector<Node>& nodes,
                   const std::vector<json>& pods) {
  std::string wanted = spec.value("nodeName", "");
  std::vector<Selector> anti = anti_affinity(spec);
  json pod = {{"metadata", {{"labels", labels}}}};
  std::string job = labels.value("job-name", "");
  std::optional<std::string> best;
  size_t best_count = 0;
  int refused_by_affinity = 0;
  for (const Node& node : nodes) {
    if ((!wanted.empty() && node.name != wanted)
        || !node_matches(node, spec.value("nodeSelector", json::object()))) {
      continue;
    }
    bool blocked = std::any_of(pods.begin(), pods.end(), [&](const json& other) {
      return holds_node(other, node.name)
             && std::any_of(anti.begin(), anti.end(),
                            [&](const Selector& s) { return s.matches(other); });
    });
    if (blocked) {
      ++refused_by_affinity;
      continue;
    }
    size_t count = static_cast<size_t>(std::count_if(pods.begin(), pods.end(), [&](const json& o) {
      return holds_node(o, node.name) && o["metadata"]["labels"].value("job-name", "") == job;
    }));
    if (!best || count < best_count) {
      best = node.name;
      best_count = count;
    }
  }
  if (best) {
    return {best, ""};
  }
  if (!wanted.empty() && std::none_of(nodes.begin(), nodes.end(), [&](const Node& n) {
        return n.name == wanted;
      })) {
    return {std::nullopt, fmt::format("node \"{}\" not found", wanted)};
  }
  return {std::nullopt,
          fmt::format("0/{} nodes are available: {} node(s) didn't match pod anti-affinity "
                      "rules, {} node(s) didn't match Pod's node affinity/selector.",
                      nodes.size(), refused_by_affinity, nodes.size() - refused_by_affinity)};
}

json job_status(const json& job, const std::vector<JobPod>& pods,
                const std::optional<std::string>& failure, WallTime start,
                std::optional<WallTime> finished) {
  int active = 0;
  int ready = 0;
  int succeeded = 0;
  int failed = 0;
  std::set<int> done;
  for (const JobPod& p : pods) {
    if (!p.finished) {
      active += p.deletion ? 0 : 1;
      ready += p.started && !p.deletion ? 1 : 0;
    } else if (p.succeeded()) {
      ++succeeded;
      done.insert(p.index);
    } else {
      ++failed;
    }
  }
  json status = {{"active", active},
                 {"ready", ready},
                 {"succeeded", succeeded},
                 {"failed", failed},
                 {"startTime", rfc3339(start)}};
  if (job["spec"].value("completionMode", "") == "Indexed") {
    status["completedIndexes"] = index_ranges(done);
  }
  if (finished) {
    std::string at = rfc3339(*finished);
    if (failure) {
      status["conditions"] = json::array(
          {job_condition("FailureTarget", true, at, *failure, "the job controller gave up"),
           job_condition("Failed", true, at, *failure, "the job controller gave up")});
    } else {
      status["completionTime"] = at;
      status["conditions"] =
          json::array({job_condition("SuccessCriteriaMet", true, at, "CompletionsReached",
                                     "Reached expected number of succeeded pods"),
                       job_condition("Complete", true, at, "CompletionsReached",
                                     "Reached expected number of succeeded pods")});
    }
  }
  return status;
}

std::vector<std::pair<std::string, std::string>> job_pod_env(const json& pod,
                                                             const std::vector<json>& services,
                                                             const Node& node) {
  std::vector<std::pair<std::string, std::string>> env;
  std::string ns = pod["metadata"].value("namespace", "");
  for (const json& s : services) {
    // kubelet links the Services of the pod's own namespace, each that has an address.
    if (s["metadata"].value("namespace", "") != ns) {
      continue;
    }
    auto [host, port] = service_address(s, node);
    if (host.empty()) {
      continue;
    }
    std::string prefix = env_name(s["metadata"].value("name", ""));
    env.emplace_back(prefix + "_SERVICE_HOST", host);
    env.emplace_back(prefix + "_SERVICE_PORT", port);
    // A named port: NAME_SERVICE_PORT_PORTNAME (the first port is the node's router's).
    json ports = s.value("spec", json::object()).value("ports", json::array());
    for (size_t i = 0; ports.is_array() && i < ports.size(); ++i) {
      json port_name = ports[i].is_object() ? ports[i].value("name", json("")) : json("");
      json number = ports[i].is_object() ? ports[i].value("port", json()) : json();
      if (port_name.is_string() && port_name != "" && number.is_number_integer()) {
        env.emplace_back(prefix + "_SERVICE_PORT_" + env_name(port_name.get<std::string>()),
                         i == 0 ? port : std::to_string(number.get<int>()));
      }
    }
  }
  json annotations = pod["metadata"].value("annotations", json::object());
  std::string index = annotations.is_object()
                          ? annotations.value("batch.kubernetes.io/job-completion-index", "")
                          : "";
  if (!index.empty()) {
    env.emplace_back("JOB_COMPLETION_INDEX", index);
  }
  json vars = pod["spec"]["containers"][0].value("env", json::array());
  for (const json& e : vars) {
    std::string name = e.value("name", "");
    if (e.contains("value") && e["value"].is_string()) {
      env.emplace_back(name, expand(e["value"].get<std::string>(), env));
    } else if (e.contains("valueFrom") && e["valueFrom"].contains("fieldRef")) {
      env.emplace_back(name, field_of(pod, e["valueFrom"]["fieldRef"].value("fieldPath", "")));
    }
  }
  return env;
}

std::vector<std::string> container_argv(
    const json& container, const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> argv;
  for (const char* key : {"command", "args"}) {
    json words = container.value(key, json::array());
    for (const json& a : words) {
      if (!a.is_string()) {
        throw Error(fmt::format("the container's {} holds {}, not a string", key, a.dump()));
      }
      argv.push_back(expand(a.get<std::string>(), env));
    }
  }
  if (argv.empty()) {
    throw Error("the container has no command");
  }
  return argv;
}

}  // namespace zerodrop::kubeapi
