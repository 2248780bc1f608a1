#include "watch/agent_hub.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "watch/ingress.h"

namespace zerodrop::watch {

using Json = nlohmann::json;

// The sink is the stream's: AgentStream keeps a reference to it.
struct AgentHub::Stream {
  verify::AgentSink sink;
  std::unique_ptr<verify::AgentStream> stream;
  std::optional<verify::AgentHello> hello;
};

AgentHub::AgentHub(Metrics& metrics) : metrics_(metrics) {}

AgentHub::~AgentHub() = default;

AgentHub::Stream& AgentHub::stream(const std::string& pod, const std::string& node,
                                   const std::string& svc) {
  auto& slot = streams_[{pod, svc}];
  if (slot) {
    return *slot;
  }
  slot = std::make_unique<Stream>();
  Stream* s = slot.get();
  // The callbacks run inside report(), under mutex_.
  s->sink.on_hello = [this, s, svc](const verify::AgentHello& h) {
    s->hello = h;
    for (const auto& m : measured_[svc]) {
      m->agent_hello(h);
    }
  };
  s->sink.on_bucket = [this, svc](const verify::AgentHello& h, const verify::BackendBucket& b) {
    on_bucket(svc, h, b);
  };
  s->sink.on_request = [this, svc](const verify::AgentHello& h, record::RequestRecord r) {
    for (const auto& m : measured_[svc]) {
      m->agent_request(h, r);
    }
  };
  s->sink.on_summary = [](const verify::AgentHello&, const verify::AgentSummary&) {
  };
  s->sink.on_note = [this, svc](const std::string& text) {
    for (const auto& m : measured_[svc]) {
      m->note(text);
    }
  };
  s->stream = std::make_unique<verify::AgentStream>(pod, node, s->sink);
  return *s;
}

void AgentHub::on_bucket(const std::string& svc, const verify::AgentHello& h,
                         const verify::BackendBucket& b) {
  // An Ingress target ("NS/NAME#ingress") is counted, not measured: its requests cross the
  // ingress controller, a router the rollout's record does not follow.
  bool ingress = svc.ends_with(kIngressSuffix);
  std::string service_svc = ingress ? svc.substr(0, svc.size() - kIngressSuffix.size()) : svc;
  bool taken = false;
  bool during_rollout = false;
  auto it = measured_.find(service_svc);
  if (it != measured_.end()) {
    during_rollout = !it->second.empty();
    for (const auto& m : it->second) {
      taken = !ingress && (m->agent_bucket(h, b) || taken);
    }
  }
  auto slash = service_svc.find('/');
  std::string ns = service_svc.substr(0, slash);
  std::string name = slash == std::string::npos ? "" : service_svc.substr(slash + 1);
  uint64_t failed = b.failed[0] + b.failed[1];
  metrics_.probed(ns, name, ingress ? Metrics::Target::ingress : Metrics::Target::service,
                  during_rollout, b.requests(), failed);
  if (!taken && !ingress) {
    metrics_.baseline(ns, name, b.requests(), failed);
  }
}

std::string AgentHub::report(const std::string& pod, const std::string& node,
                             const std::string& body, std::chrono::steady_clock::time_point now) {
  std::vector<verify::ReportPart> parts = verify::split_report(body);
  std::lock_guard lock(mutex_);
  last_report_[pod] = now;
  for (const verify::ReportPart& part : parts) {
    if (!part.error.empty()) {
      std::string problem = fmt::format("{}: the agent on node {}: {}", part.svc, node, part.error);
      if (problems_seen_.insert(problem).second) {
        problems_.push_back(problem);
      }
    }
    Stream& s = stream(pod, node, part.svc);
    size_t begin = 0;
    while (begin < part.lines.size()) {
      size_t end = part.lines.find('\n', begin);
      s.stream->feed(part.lines.substr(begin, end - begin));
      begin = end + 1;
    }
  }
  return targets_json_;
}

void AgentHub::set_targets(std::vector<verify::ProbeTarget> targets) {
  std::string text = verify::probe_targets_json(targets);
  std::lock_guard lock(mutex_);
  targets_json_ = std::move(text);
}

void AgentHub::attach(const std::shared_ptr<Measured>& m) {
  if (m->svc().empty()) {
    return;
  }
  std::lock_guard lock(mutex_);
  measured_[m->svc()].push_back(m);
  for (const auto& [key, s] : streams_) {
    if (key.second == m->svc() && s->hello) {
      m->agent_hello(*s->hello);
    }
  }
}

void AgentHub::detach(const std::shared_ptr<Measured>& m) {
  std::lock_guard lock(mutex_);
  auto it = measured_.find(m->svc());
  if (it != measured_.end()) {
    std::erase(it->second, m);
  }
}

std::set<std::string> AgentHub::lost(std::chrono::steady_clock::time_point now,
                                     std::chrono::seconds silence) const {
  std::lock_guard lock(mutex_);
  std::set<std::string> out;
  for (const auto& [pod, at] : last_report_) {
    if (now - at > silence) {
      out.insert(pod);
    }
  }
  return out;
}

int AgentHub::reporting(std::chrono::steady_clock::time_point now,
                        std::chrono::seconds silence) const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(
      std::count_if(last_report_.begin(), last_report_.end(),
                    [&](const auto& kv) { return now - kv.second <= silence; }));
}

void AgentHub::prune(std::chrono::steady_clock::time_point now, std::chrono::seconds forget) {
  std::lock_guard lock(mutex_);
  for (auto it = last_report_.begin(); it != last_report_.end();) {
    if (now - it->second > forget) {
      std::erase_if(streams_, [&](const auto& kv) { return kv.first.first == it->first; });
      it = last_report_.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<std::string> AgentHub::take_problems() {
  std::lock_guard lock(mutex_);
  return std::exchange(problems_, {});
}

}  // namespace zerodrop::watch
