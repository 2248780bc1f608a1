#include "kubeapi/objects.h"

#include <ctime>

#include <fmt/format.h>

namespace zerodrop::kubeapi {

using nlohmann::json;

namespace {

uint64_t fnv1a(const std::string& text, uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : text) {
    h = (h ^ c) * 1099511628211ull;
  }
  return h;
}

std::string seconds_text(Duration d) {
  return fmt::format("{}", to_seconds(d));
}

json container(const ClusterInfo& info) {
  json c = {{"name", info.container},
            {"image", "zerodrop.dev/lab:local"},
            {"command", info.command},
            {"imagePullPolicy", "Never"},
            {"terminationMessagePolicy", "File"}};
  if (info.port != 0) {
    c["ports"] = json::array({{{"containerPort", info.port}, {"protocol", "TCP"}}});
  }
  if (info.prestop_sleep) {
    c["lifecycle"]["preStop"]["exec"]["command"] = {"sleep", seconds_text(*info.prestop_sleep)};
  }
  json probe = info.readiness_path.empty()
                   ? json{{"tcpSocket", {{"port", info.port}}}}
                   : json{{"httpGet", {{"path", info.readiness_path}, {"port", info.port}}}};
  c["readinessProbe"] = probe;
  return c;
}

}  // namespace

std::chrono::system_clock::time_point wall(const ClusterInfo& info, record::Micros t) {
  return info.start_wall + std::chrono::duration_cast<std::chrono::system_clock::duration>(t);
}

std::string rfc3339(std::chrono::system_clock::time_point t) {
  std::time_t s = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&s, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string rfc3339_micros(std::chrono::system_clock::time_point t) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  auto seconds = std::chrono::system_clock::time_point(std::chrono::seconds(us / 1000000));
  std::string text = rfc3339(seconds);
  return fmt::format("{}.{:06}Z", text.substr(0, text.size() - 1), us % 1000000);
}

std::string uid_of(const std::string& kind, const std::string& name,
                   std::chrono::system_clock::time_point start) {
  std::string key = fmt::format("{}/{}/{}", kind, name, start.time_since_epoch().count());
  uint64_t a = fnv1a(key);
  uint64_t b = fnv1a(key, a);
  return fmt::format("{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}", a >> 32, (a >> 16) & 0xffff,
                     a & 0xfff, b >> 52, b & 0xffffffffffffull);
}

std::string template_hash(int revision) {
  // Kubernetes' safe alphabet for generated names (no vowels, no look-alikes).
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  uint64_t h = fnv1a(fmt::format("revision-{}", revision));
  std::string out;
  for (int i = 0; i < 10; ++i) {
    out += kAlphabet[h % (sizeof kAlphabet - 1)];
    h /= sizeof kAlphabet - 1;
  }
  return out;
}

json metadata(const ClusterInfo& info, const std::string& kind, const std::string& name,
              record::Micros created) {
  return {{"name", name},
          {"namespace", info.ns},
          {"uid", uid_of(kind, name, info.start_wall)},
          {"creationTimestamp", rfc3339(wall(info, created))}};
}

json pod_template(const ClusterInfo& info) {
  return {{"metadata", {{"labels", {{"app", info.deployment}}}}},
          {"spec",
           {{"containers", json::array({container(info)})},
            {"restartPolicy", "Always"},
            {"terminationGracePeriodSeconds",
             std::chrono::ceil<std::chrono::seconds>(info.grace).count()},
            {"dnsPolicy", "ClusterFirst"}}}};
}

json deployment_object(const ClusterInfo& info) {
  json d = {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata", metadata(info, "Deployment", info.deployment, record::Micros(0))}};
  d["metadata"]["generation"] = 1;
  d["metadata"]["labels"] = {{"app", info.deployment}};
  d["metadata"]["annotations"] = {{"deployment.kubernetes.io/revision", "1"}, {kWorkload, "lab"}};
  d["spec"] = {
      {"replicas", info.replicas},
      {"selector", {{"matchLabels", {{"app", info.deployment}}}}},
      {"strategy",
       {{"type", "RollingUpdate"},
        {"rollingUpdate",
         {{"maxSurge", info.max_surge}, {"maxUnavailable", info.max_unavailable}}}}},
      {"minReadySeconds", std::chrono::duration_cast<std::chrono::seconds>(info.min_ready).count()},
      {"revisionHistoryLimit", 10},
      {"progressDeadlineSeconds", 600},
      {"template", pod_template(info)}};
  d["status"] = json::object();
  return d;
}

json reference_to(const json& object) {
  return {{"apiVersion", object["apiVersion"]},
          {"kind", object["kind"]},
          {"namespace", object["metadata"].value("namespace", "")},
          {"name", object["metadata"]["name"]},
          {"uid", object["metadata"]["uid"]}};
}

json controller_reference(const std::string& api_version, const std::string& kind,
                          const std::string& name, const json& uid) {
  return {{"apiVersion", api_version},
          {"kind", kind},
          {"name", name},
          {"uid", uid},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

void mark_deleting(json& metadata, std::chrono::system_clock::time_point deletion, Duration grace) {
  auto seconds = std::chrono::ceil<std::chrono::seconds>(grace);
  metadata["deletionTimestamp"] = rfc3339(deletion + seconds);
  metadata["deletionGracePeriodSeconds"] = seconds.count();
}

json replica_set_object(const ClusterInfo& info, const json& deployment, int revision,
                        record::Micros created) {
  std::string hash = template_hash(revision);
  std::string name = fmt::format("{}-{}", info.deployment, hash);
  json rs = {{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata", metadata(info, "ReplicaSet", name, created)}};
  json labels = {{"app", info.deployment}, {"pod-template-hash", hash}};
  rs["metadata"]["labels"] = labels;
  rs["metadata"]["generation"] = 1;
  rs["metadata"]["annotations"] = {
      {"deployment.kubernetes.io/revision", std::to_string(revision)},
      {"deployment.kubernetes.io/desired-replicas", std::to_string(info.replicas)}};
  rs["metadata"]["ownerReferences"] = json::array(
      {controller_reference(deployment["apiVersion"], deployment["kind"],
                            deployment["metadata"]["name"], deployment["metadata"]["uid"])});
  json tmpl = deployment["spec"]["template"];
  tmpl["metadata"]["labels"]["pod-template-hash"] = hash;
  rs["spec"] = {{"replicas", 0}, {"selector", {{"matchLabels", labels}}}, {"template", tmpl}};
  rs["status"] = {{"replicas", 0}, {"observedGeneration", 1}};
  return rs;
}

json service_object(const ClusterInfo& info) {
  json s = {{"apiVersion", "v1"},
            {"kind", "Service"},
            {"metadata", metadata(info, "Service", info.deployment, record::Micros(0))}};
  std::string routers;
  for (const Node& n : info.nodes) {
    routers += fmt::format("{}{}={}:{}", routers.empty() ? "" : ",", n.name, n.host, n.port);
  }
  s["metadata"]["labels"] = {{"app", info.deployment}};
  s["metadata"]["annotations"] = {{"zerodrop.dev/node-routers", routers}};
  std::string ip = info.nodes.empty() ? "127.0.0.1" : info.nodes.front().host;
  uint16_t port = info.nodes.empty() ? 0 : info.nodes.front().port;
  s["spec"] = {
      {"type", "ClusterIP"},
      {"clusterIP", ip},
      {"clusterIPs", {ip}},
      {"selector", {{"app", info.deployment}}},
      {"ports",
       json::array(
           {{{"name", "http"}, {"protocol", "TCP"}, {"port", port}, {"targetPort", info.port}}})},
      {"sessionAffinity", "None"},
      {"internalTrafficPolicy", "Cluster"}};
  s["status"] = {{"loadBalancer", json::object()}};
  return s;
}

json node_object(const ClusterInfo& info, const Node& node) {
  json n = {{"apiVersion", "v1"},
            {"kind", "Node"},
            {"metadata", metadata(info, "Node", node.name, record::Micros(0))}};
  n["metadata"].erase("namespace");
  n["metadata"]["labels"] = {{"kubernetes.io/hostname", node.name}, {"kubernetes.io/os", "linux"}};
  std::string at = rfc3339(info.start_wall);
  n["status"] = {{"conditions", json::array({{{"type", "Ready"},
                                              {"status", "True"},
                                              {"reason", "KubeletReady"},
                                              {"lastHeartbeatTime", at},
                                              {"lastTransitionTime", at}}})},
                 {"addresses", json::array({{{"type", "InternalIP"}, {"address", node.host}},
                                            {{"type", "Hostname"}, {"address", node.name}}})},
                 {"nodeInfo", {{"kubeletVersion", "v" + info.k8s_version + ".0"}}}};
  return n;
}

json namespace_object(const ClusterInfo& info, const std::string& name) {
  json n = {{"apiVersion", "v1"},
            {"kind", "Namespace"},
            {"metadata", metadata(info, "Namespace", name, record::Micros(0))}};
  n["metadata"].erase("namespace");
  n["spec"] = {{"finalizers", {"kubernetes"}}};
  n["status"] = {{"phase", "Active"}};
  return n;
}

json event_object(const ClusterInfo& info, const json& involved, const std::string& reason,
                  const std::string& message, const std::string& type, const std::string& component,
                  record::Micros t, int serial) {
  std::string name =
      fmt::format("{}.{:x}", involved["name"].get<std::string>(), 0x1800000000000000ull + serial);
  std::string at = rfc3339(wall(info, t));
  json e = {{"apiVersion", "v1"},
            {"kind", "Event"},
            {"metadata", metadata(info, "Event", name, t)},
            {"involvedObject", involved},
            {"reason", reason},
            {"message", message},
            {"type", type},
            {"source", {{"component", component}}},
            {"firstTimestamp", at},
            {"lastTimestamp", at},
            {"count", 1},
            {"eventTime", nullptr},
            {"reportingComponent", component},
            {"reportingInstance", ""}};
  return e;
}

}  // namespace zerodrop::kubeapi
