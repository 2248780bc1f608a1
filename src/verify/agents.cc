#include "verify/agents.h"

#include <unistd.h>

#include <chrono>
#include <random>

#include <fmt/format.h>

#include "base/error.h"
#include "base/parse.h"
#include "verify/agent.h"
#include "verify/anchor.h"
#include "verify/watch.h"

namespace zerodrop::verify {

using Json = nlohmann::json;  // not `json`: other files of the unity build name variables so
using namespace std::chrono_literals;

namespace {

constexpr int kFollowAttempts = 5;  // a log follow cut short is resumed this often

std::string seconds_arg(Duration d) {
  return fmt::format("{}s", std::chrono::ceil<std::chrono::seconds>(d).count());
}

Json agent_container(const AgentJob& j) {
  std::vector<std::string> args = {"verify-agent",
                                   "--service",
                                   j.service,
                                   "--path",
                                   j.path,
                                   "--rate",
                                   fmt::format("{}", j.rate),
                                   "--count",
                                   std::to_string(j.count),
                                   "--timeout",
                                   format_duration(j.timeout),
                                   "--backend-header",
                                   j.backend_header,
                                   "--duration",
                                   seconds_arg(j.deadline),
                                   j.keepalive ? "--keepalive" : "--no-keepalive"};
  if (j.records == AgentRecords::all) {
    args.push_back("--records");
    args.push_back("all");
  }
  if (j.fresh_share > 0) {
    args.push_back("--fresh");
    args.push_back(fmt::format("{}%", j.fresh_share * 100));
  }
  for (const auto& [name, value] : j.headers) {
    args.push_back("-H");
    args.push_back(name + ": " + value);
  }
  auto field = [](const char* name, const char* path) {
    return Json{{"name", name}, {"valueFrom", {{"fieldRef", {{"fieldPath", path}}}}}};
  };
  return {
      {"name", "agent"},
      {"image", j.image},
      {"imagePullPolicy", "IfNotPresent"},
      {"command", {"/zerodrop"}},
      {"args", args},
      {"env",
       Json::array({field("POD_NAME", "metadata.name"), field("NODE_NAME", "spec.nodeName")})},
      {"securityContext",
       {{"allowPrivilegeEscalation", false},
        {"readOnlyRootFilesystem", true},
        {"capabilities", {{"drop", {"ALL"}}}}}},
      {"resources",
       {{"requests", {{"cpu", "50m"}, {"memory", "32Mi"}}}, {"limits", {{"memory", "128Mi"}}}}}};
}

}  // namespace

std::string new_run_id() {
  static constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device device;
  std::mt19937_64 random(device() ^ static_cast<uint64_t>(::getpid()));
  std::string id;
  for (int i = 0; i < 6; ++i) {
    id += kAlphabet[random() % kAlphabet.size()];
  }
  return id;
}

Json agent_job_manifest(const AgentJob& j) {
  Json labels = run_labels(j.run_id, "zerodrop-verify-agent");
  Json same_run = {{"matchLabels", {{"zerodrop.dev/run", j.run_id}}}};
  Json pod = {{"restartPolicy", "Never"},
              {"automountServiceAccountToken", false},
              {"enableServiceLinks", true},
              // In-flight requests finish within --timeout after SIGTERM.
              {"terminationGracePeriodSeconds",
               std::chrono::ceil<std::chrono::seconds>(j.timeout).count() + 5},
              {"securityContext",
               {{"runAsNonRoot", true},
                {"runAsUser", 65532},
                {"runAsGroup", 65532},
                {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
              {"containers", Json::array({agent_container(j)})}};
  if (j.per_node) {
    pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] =
        Json::array({{{"labelSelector", same_run}, {"topologyKey", "kubernetes.io/hostname"}}});
  } else {
    pod["topologySpreadConstraints"] = Json::array({{{"maxSkew", 1},
                                                     {"topologyKey", "kubernetes.io/hostname"},
                                                     {"whenUnsatisfiable", "ScheduleAnyway"},
                                                     {"labelSelector", same_run}}});
  }
  auto deadline = std::chrono::ceil<std::chrono::seconds>(j.deadline).count();
  Json metadata = {{"name", j.name()}, {"namespace", j.namespace_name}, {"labels", labels}};
  if (!j.owner.is_null()) {
    metadata["ownerReferences"] = Json::array({j.owner});
  }
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", metadata},
          {"spec",
           {{"completionMode", "Indexed"},
            {"completions", j.count},
            {"parallelism", j.count},
            {"backoffLimit", 0},
            {"activeDeadlineSeconds", deadline + 60},  // the agents stop by themselves first
            {"ttlSecondsAfterFinished", 600},
            {"template", {{"metadata", {{"labels", labels}}}, {"spec", pod}}}}}};
}

struct Agents::Follow {
  Follow(std::string pod_name, std::string node_name, const AgentSink& sink)
      : pod(pod_name), node(node_name), stream(std::move(pod_name), std::move(node_name), sink) {}

  std::string pod;
  std::string node;
  AgentStream stream;
  std::atomic<bool> ended{false};
  Cancel cancel;
  std::thread thread;
};

Agents::Agents(const ApiClient& client, AgentJob job, AgentSink sink, bool keep)
    : client_(client), job_(std::move(job)), sink_(std::move(sink)), keep_(keep) {
  ApiResponse r =
      client_.request(Method::post,
                      fmt::format("/apis/batch/v1/namespaces/{}/jobs?fieldManager=zerodrop-verify",
                                  job_.namespace_name),
                      agent_job_manifest(job_).dump());
  if (!r.ok()) {
    throw Error(fmt::format("cannot create the agents' Job {}: {}", job_.name(), error_text(r)));
  }
  discoverer_ = std::thread([this] { discover(); });
}

Agents::~Agents() {
  stop(0s);
}

int Agents::ready() const {
  std::lock_guard lock(mutex_);
  return ready_;
}

std::vector<std::string> Agents::problems() const {
  std::lock_guard lock(mutex_);
  return {problems_.begin(), problems_.end()};
}

// Lists the Job's pods every 200 ms and follows each one's log once it runs on a node.
void Agents::discover() {
  std::string target =
      fmt::format("/api/v1/namespaces/{}/pods?labelSelector={}", job_.namespace_name,
                  query_escape("zerodrop.dev/run=" + job_.run_id));
  while (!stopping_.load()) {
    ApiResponse r{};
    try {
      r = client_.get(target);
    } catch (const Error& e) {
      sink_.on_note(fmt::format("listing the agents' pods failed: {}", e.what()));
    }
    Json list = r.ok() ? Json::parse(r.body, nullptr, false) : Json();
    Json items = list.is_object() ? list.value("items", Json::array()) : Json::array();
    for (const Json& pod : items) {
      std::string name = pod["metadata"].value("name", "");
      std::string node = pod.value("spec", Json::object()).value("nodeName", "");
      std::string phase = pod.value("status", Json::object()).value("phase", "");
      std::lock_guard lock(mutex_);
      if (node.empty() || phase == "Pending") {
        Json conditions = pod.value("status", Json::object()).value("conditions", Json::array());
        for (const Json& c : conditions) {
          if (c.value("status", "") == "False" && c.contains("message")) {
            problems_.insert(fmt::format("{}: {}", name, c["message"].get<std::string>()));
          }
        }
        continue;
      }
      if (follows_.count(name) == 0) {
        auto f = std::make_unique<Follow>(name, node, sink_);
        Follow* raw = f.get();
        follows_[name] = std::move(f);
        raw->thread = std::thread([this, raw] { follow(*raw); });
      }
    }
    for (int i = 0; i < 10 && !stopping_.load(); ++i) {
      std::this_thread::sleep_for(20ms);
    }
  }
}

// Follows one agent's log to its bye; a follow cut short is resumed (lines already read are
// skipped by their numbers).
void Agents::follow(Follow& f) {
  std::string target =
      fmt::format("/api/v1/namespaces/{}/pods/{}/log?follow=true", job_.namespace_name, f.pod);
  for (int attempt = 0; attempt < kFollowAttempts && !f.stream.said_bye() && !f.cancel.cancelled();
       ++attempt) {
    LineDecoder decoder;
    try {
      ApiResponse r = client_.stream(
          target,
          [&](std::string_view data) {
            for (const std::string& line : decoder.feed(data)) {
              if (f.stream.feed(line)) {
                std::lock_guard lock(mutex_);
                ++ready_;
              }
            }
            return true;
          },
          f.cancel);
      if (!r.ok()) {
        sink_.on_note(fmt::format("agent {}: its log: {}", f.pod, error_text(r)));
      }
    } catch (const Error& e) {
      sink_.on_note(fmt::format("agent {}: its log: {}", f.pod, e.what()));
    }
    if (!f.stream.said_bye() && !f.cancel.cancelled()) {
      std::this_thread::sleep_for(200ms);
    }
  }
  if (!f.stream.said_bye() && !f.cancel.cancelled()) {
    sink_.on_note(
        fmt::format("agent {} on {}: its log ended at line {} without bye: its "
                    "records after that are missing",
                    f.pod, f.node, f.stream.next()));
  }
  f.ended.store(true);
}

bool AgentStream::feed(const std::string& text) {
  std::optional<AgentLine> line;
  try {
    line = parse_agent_line(text);
  } catch (const Error& e) {
    sink_.on_note(fmt::format("agent {}: {}", pod_, e.what()));
    return false;
  }
  if (!line || line->n < next_) {
    return false;  // the runtime's own words, or a line read before a resumed follow
  }
  if (line->n > next_) {
    sink_.on_note(fmt::format("agent {} on {}: lines {}-{} of its stream are missing", pod_, node_,
                              next_, line->n - 1));
  }
  next_ = line->n + 1;
  if (line->kind == "hello") {
    AgentHello h{pod_, line->body.value("node", node_), line->body.value("index", 0),
                 line->body.value("wall_us", int64_t{0})};
    h.node = h.node.empty() ? node_ : h.node;
    h.records =
        line->body.value("records", "all") == "failed" ? AgentRecords::failed : AgentRecords::all;
    hello_ = h;
    sink_.on_hello(h);
    return true;
  }
  if (line->kind == "req" && hello_) {
    sink_.on_request(*hello_, std::move(*line->request));
  } else if (line->kind == "bucket" && hello_) {
    sink_.on_bucket(*hello_, *line->bucket);
  } else if (line->kind == "summary" && hello_ && sink_.on_summary) {
    sink_.on_summary(*hello_, {line->body.value("requests", uint64_t{0}),
                               line->body.value("failed", uint64_t{0})});
  } else if (line->kind == "bye") {
    bye_ = true;
  }
  return false;
}

void Agents::stop(Duration drain) {
  if (!deleted_ && !keep_) {
    deleted_ = true;
    try {
      ApiResponse r = client_.request(
          Method::remove,
          fmt::format("/apis/batch/v1/namespaces/{}/jobs/{}?propagationPolicy=Background",
                      job_.namespace_name, job_.name()));
      if (!r.ok() && r.status != 404) {
        sink_.on_note(
            fmt::format("cannot delete the agents' Job {}: {}", job_.name(), error_text(r)));
      }
    } catch (const Error& e) {
      sink_.on_note(fmt::format("cannot delete the agents' Job {}: {}", job_.name(), e.what()));
    }
  }
  auto deadline = std::chrono::steady_clock::now() + drain;
  auto all_ended = [this] {
    std::lock_guard lock(mutex_);
    for (const auto& [pod, f] : follows_) {
      if (!f->ended.load()) {
        return false;
      }
    }
    return true;
  };
  while (!all_ended() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  stopping_.store(true);
  if (discoverer_.joinable()) {
    discoverer_.join();
  }
  std::vector<Follow*> follows;  // joined unlocked: their threads lock to count hellos
  {
    std::lock_guard lock(mutex_);
    for (auto& [pod, f] : follows_) {
      follows.push_back(f.get());
    }
  }
  for (Follow* f : follows) {
    f->cancel.cancel();
    if (f->thread.joinable()) {
      f->thread.join();
    }
  }
}

}  // namespace zerodrop::verify
