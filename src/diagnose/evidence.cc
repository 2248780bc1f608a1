#include "diagnose/evidence.h"

#include <algorithm>
#include <csignal>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "base/subprocess.h"
#include "diagnose/sync_rules.h"

namespace zerodrop::diagnose {
namespace {

using record::Hole;
using record::Outcome;
using record::RequestRecord;

// "1 request", "3 requests".
std::string counted(size_t n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

// The failures of one hole, as records, with what the rules found.
struct Group {
  Hole hole;
  std::vector<const RequestRecord*> requests;
  std::vector<const RequestDiagnosis*> diagnoses;
};

std::string classes_text(const std::vector<const RequestRecord*>& requests) {
  std::map<std::string_view, int> counts;
  for (const RequestRecord* r : requests) {
    ++counts[record::to_string(r->outcome)];
  }
  std::vector<std::pair<std::string_view, int>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (const auto& [name, n] : sorted) {
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", name, n);
  }
  return text;
}

// The pod with the most failures of the group, its failures, and a clause for the others.
struct TopPod {
  std::string name;
  std::vector<const RequestRecord*> requests;
  std::string others;  // "; 35 more at pods web-0, web-1" or empty
};

TopPod top_pod(const Group& g) {
  std::map<std::string, std::vector<const RequestRecord*>> by_pod;
  for (const RequestRecord* r : g.requests) {
    by_pod[r->backend].push_back(r);
  }
  // A named pod before the failures that name none (one of several terminating pods).
  auto top = std::max_element(by_pod.begin(), by_pod.end(), [](const auto& a, const auto& b) {
    return std::make_pair(!a.first.empty(), a.second.size())
           < std::make_pair(!b.first.empty(), b.second.size());
  });
  TopPod t{top->first, top->second, {}};
  std::vector<std::string> rest;
  for (const auto& [pod, list] : by_pod) {
    if (pod != t.name) {
      rest.push_back(pod.empty() ? "(unknown)" : pod);
    }
  }
  if (!rest.empty()) {
    t.others = fmt::format("; {} more at pod{} {}", g.requests.size() - t.requests.size(),
                           rest.size() > 1 ? "s" : "", fmt::join(rest, ", "));
  }
  return t;
}

// The latest termination update among the routers that carried `requests` to `pod`.
std::optional<std::pair<std::string, Micros>> last_update(
    const Facts& facts, const std::string& pod, const std::vector<const RequestRecord*>& requests) {
  std::set<std::string> routers;
  for (const RequestRecord* r : requests) {
    routers.insert(r->router);
  }
  std::optional<std::pair<std::string, Micros>> last;
  for (const std::string& router : routers) {
    auto t = facts.termination_applied(router, pod);
    if (t && (!last || *t > last->second)) {
      last = std::make_pair(router, *t);
    }
  }
  return last;
}

// "at 9.04 s" for one moment (as the text shows it), else "between 9.04 s and 9.50 s".
std::string span_text(Micros first, Micros last) {
  std::string from = seconds_text(first), to = seconds_text(last);
  return from == to ? fmt::format("at {}", from) : fmt::format("between {} and {}", from, to);
}

std::string deregistration_evidence(const Group& g, const Facts& facts) {
  TopPod top = top_pod(g);
  const PodLife* life = facts.pod(top.name);
  bool refused = std::all_of(top.requests.begin(), top.requests.end(),
                             [](auto* r) { return r->outcome == Outcome::connect_refused; });
  std::string what =
      refused ? fmt::format("{} refused by pod {}", counted(top.requests.size(), "connection"),
                            top.name)
              : fmt::format("{} to pod {} failed ({})", counted(top.requests.size(), "request"),
                            top.name, classes_text(top.requests));
  std::string from =
      life && life->signal
          ? fmt::format("{} at {}", signal_full_name(life->stop_signal.value_or(SIGTERM)),
                        seconds_text(*life->signal))
      : life && life->exited ? fmt::format("its exit at {}", seconds_text(*life->exited))
                             : std::string("its stop");
  auto update = last_update(facts, top.name, top.requests);
  std::string to =
      update ? fmt::format("router {}'s update at {}", update->first, seconds_text(update->second))
             : std::string("any router's update (none recorded)");
  // A hook that should have held the pod (an exec preStop whose program the image lacks).
  std::string hook = life && life->prestop_failed && life->prestop_finished
                         ? fmt::format("; its preStop hook failed at {} ({})",
                                       seconds_text(*life->prestop_finished), life->prestop_error)
                         : std::string();
  return fmt::format("{} between {} and {}{}{}", what, from, to, hook, top.others);
}

// The process exit (not the main one) that broke most of `requests` at `life`, if any did.
const ProcessExit* breaking_exit(const PodLife& life,
                                 const std::vector<const RequestRecord*>& requests) {
  std::map<const ProcessExit*, size_t> counts;
  for (const RequestRecord* r : requests) {
    if (const ProcessExit* p = r->sent ? exit_that_broke(life, *r->sent, r->done) : nullptr) {
      ++counts[p];
    }
  }
  auto most = std::max_element(counts.begin(), counts.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  return most == counts.end() ? nullptr : most->first;
}

// "when its process pid 12 (python3) exited at 4.20 s (killed by SIGTERM), 5.1 ms after SIGTERM,
// 310 ms before its main process exited".
std::string process_exit_text(const PodLife& life, const ProcessExit& p) {
  std::string text =
      fmt::format("when its process {} exited at {} ({})", p.process, seconds_text(p.t), p.status);
  if (life.signal && p.t >= *life.signal) {
    text += fmt::format(", {} after {}", duration_text(p.t - *life.signal),
                        signal_full_name(life.stop_signal.value_or(SIGTERM)));
  }
  if (life.exited && *life.exited >= p.t) {
    text += fmt::format(", {} before its main process exited", duration_text(*life.exited - p.t));
  }
  return text;
}

std::string no_drain_evidence(const Group& g, const Facts& facts) {
  TopPod top = top_pod(g);
  const PodLife* life = facts.pod(top.name);
  std::string how;
  const ProcessExit* process = life ? breaking_exit(*life, top.requests) : nullptr;
  if (process) {
    how = process_exit_text(*life, *process);
  } else if (life && life->exited) {
    std::string status = life->exit_signal
                             ? fmt::format("killed by {}", signal_full_name(*life->exit_signal))
                             : fmt::format("exit code {}", life->exit_code.value_or(0));
    how = fmt::format("when it exited at {} ({})", seconds_text(*life->exited), status);
    if (life->signal) {
      how += fmt::format(", {} after {}", duration_text(*life->exited - *life->signal),
                         signal_full_name(life->stop_signal.value_or(SIGTERM)));
    }
  } else if (life && life->signal) {
    how = fmt::format("after {} at {}", signal_full_name(life->stop_signal.value_or(SIGTERM)),
                      seconds_text(*life->signal));
  }
  return fmt::format("{} in flight at pod {} broke {} ({}){}",
                     counted(top.requests.size(), "request"), top.name, how,
                     classes_text(top.requests), top.others);
}

std::string grace_evidence(const Group& g, const Facts& facts, const std::string& drain) {
  TopPod top = top_pod(g);
  const PodLife* life = facts.pod(top.name);
  std::string when;
  if (life && life->kill) {
    when = fmt::format(" by SIGKILL at {}", seconds_text(*life->kill));
    if (life->deletion) {
      when +=
          fmt::format(", {} after its deletion at {}", duration_text(*life->kill - *life->deletion),
                      seconds_text(*life->deletion));
    }
  }
  std::string longest = drain.empty() ? std::string() : fmt::format("; {}", drain);
  return fmt::format("{} in flight at pod {} {} cut{}{}{}", counted(top.requests.size(), "request"),
                     top.name, top.requests.size() == 1 ? "was" : "were", when, top.others,
                     longest);
}

std::string keepalive_evidence(const Group& g, const Facts& facts) {
  TopPod top = top_pod(g);
  const PodLife* life = facts.pod(top.name);
  Micros first = send_time(*top.requests.front());
  Micros last = first;
  for (const RequestRecord* r : top.requests) {
    first = std::min(first, send_time(*r));
    last = std::max(last, send_time(*r));
  }
  auto update = last_update(facts, top.name, top.requests);
  std::string removed = update ? fmt::format(", after router {} had removed it at {}",
                                             update->first, seconds_text(update->second))
                               : std::string();
  std::string exited = life && life->exited
                           ? fmt::format("; it exited at {}", seconds_text(*life->exited))
                           : std::string();
  return fmt::format("{} on reused keep-alive connections to pod {} failed ({}) {}{}{}{}",
                     counted(top.requests.size(), "request"), top.name, classes_text(top.requests),
                     span_text(first, last), removed, exited, top.others);
}

std::string readiness_evidence(const Group& g, const Facts& facts, const RuleContext& context) {
  TopPod top = top_pod(g);
  const PodLife* life = facts.pod(top.name);
  std::string window;
  if (life && life->ready && life->first_success) {
    window = fmt::format(" between its Ready at {} and its first successful response at {}",
                         seconds_text(*life->ready), seconds_text(*life->first_success));
  } else if (life && life->ready) {
    window = fmt::format(" after its Ready at {}; it never answered successfully",
                         seconds_text(*life->ready));
  } else {
    window = " before its readiness probe passed";
  }
  std::string probe = context.readiness
                          ? fmt::format(" (readiness probe: {})", context.readiness->text())
                          : std::string();
  return fmt::format("{} to pod {} failed ({}){}{}{}", counted(top.requests.size(), "request"),
                     top.name, classes_text(top.requests), window, probe, top.others);
}

std::string times_text(const Group& g) {
  Micros first = send_time(*g.requests.front());
  Micros last = first;
  for (const RequestRecord* r : g.requests) {
    first = std::min(first, send_time(*r));
    last = std::max(last, send_time(*r));
  }
  return span_text(first, last);
}

// Capacity is judged two ways: pods Ready in truth, and what each router saw as ready.
std::string capacity_evidence(const Group& g, int min_ready, const RuleContext& context) {
  std::string text = fmt::format("{} failed ({}) {}", counted(g.requests.size(), "request"),
                                 classes_text(g.requests), times_text(g));
  if (!context.replicas || min_ready < *context.replicas) {
    std::string of = context.replicas ? fmt::format(" of {}", *context.replicas) : std::string();
    text += fmt::format(" while as few as {}{} replicas were Ready", min_ready, of);
  }
  std::set<std::string> empty_routers;
  size_t empty = 0;
  for (size_t i = 0; i < g.diagnoses.size(); ++i) {
    if (g.diagnoses[i]->reason.find("had no ready endpoint") != std::string::npos) {
      ++empty;
      empty_routers.insert(g.requests[i]->router);
    }
  }
  if (empty > 0) {
    text += fmt::format("; {} went through router{} {} with no ready endpoint",
                        empty == g.requests.size() ? "all" : fmt::format("{}", empty),
                        empty_routers.size() == 1 ? "" : "s", fmt::join(empty_routers, ", "));
  }
  return text;
}

std::string liveness_evidence(const Group& g, const Facts& facts) {
  TopPod top = top_pod(g);
  const PodLife* life = facts.pod(top.name);
  std::string when;
  if (life && !life->liveness_restarts.empty()) {
    when = fmt::format(" after the liveness probe restarted it at {}",
                       seconds_text(life->liveness_restarts.front()));
    if (life->deletion) {
      when += fmt::format(", {} into its termination",
                          duration_text(life->liveness_restarts.front() - *life->deletion));
    }
  }
  return fmt::format("{} at pod {} failed ({}){}{}", counted(top.requests.size(), "request"),
                     top.name, classes_text(top.requests), when, top.others);
}

// How many of the group each proof gave (the reason names it: "(proved)", "(likely, …"), the
// nodes, and the first failure's own reason, which quotes the commit or the change.
std::string sync_loss_evidence(const Group& g) {
  std::map<std::string, size_t> by_proof;
  std::set<std::string> nodes;
  for (size_t i = 0; i < g.requests.size(); ++i) {
    for (SyncLossProof p :
         {SyncLossProof::proved, SyncLossProof::likely, SyncLossProof::possible}) {
      if (g.diagnoses[i]->reason.find(fmt::format("({}", to_string(p))) != std::string::npos) {
        ++by_proof[std::string(to_string(p))];
      }
    }
    nodes.insert(g.requests[i]->router);
  }
  std::vector<std::string> proofs;
  for (const auto& [proof, n] : by_proof) {
    proofs.push_back(fmt::format("{} {}", n, proof));
  }
  return fmt::format("{} lost by the proxy of {} while it rewrote its rules ({}); first: {}",
                     counted(g.requests.size(), "new connect"), fmt::join(nodes, ", "),
                     fmt::join(proofs, ", "), g.diagnoses.front()->reason);
}

// The reloads' cuts: how many, on which routers, how many a client could resend, and the first
// one's reason, which quotes nginx's access and error log lines.
std::string reload_evidence(const Group& g) {
  std::set<std::string> routers;
  size_t safe = 0;
  for (const RequestRecord* r : g.requests) {
    routers.insert(r->router);
    safe += r->retry_safe ? 1 : 0;
  }
  return fmt::format(
      "{} cut by nginx reloads of {} on kept-alive client connections, before any response ({} "
      "retry-safe); first: {}",
      counted(g.requests.size(), "request"), fmt::join(routers, ", "), safe,
      g.diagnoses.front()->reason);
}

// "pods pod-1, pod-2 of version A (./app --app-version 1)".
std::string version_text(const std::set<std::string>& pods, const std::string& version,
                         const std::string& command) {
  return fmt::format("pod{} {} of version {}{}", pods.size() > 1 ? "s" : "", fmt::join(pods, ", "),
                     version, command.empty() ? "" : fmt::format(" ({})", command));
}

std::string schema_evidence(const Group& g, const Facts& facts, const RuleContext& context) {
  std::set<std::string> old_pods, new_pods;
  size_t old_failed = 0;
  std::string old_body, new_body;  // the first error body each version answered
  for (const RequestRecord* r : g.requests) {
    const PodLife* life = facts.pod(r->backend);
    bool old_version = life != nullptr && life->version == "A";
    (old_version ? old_pods : new_pods).insert(r->backend);
    old_failed += old_version ? 1 : 0;
    std::string& body = old_version ? old_body : new_body;
    if (body.empty()) {
      body = r->body;
    }
  }
  std::vector<std::string> parts;
  if (!old_pods.empty()) {
    parts.push_back(fmt::format("{} on {} after the migration began",
                                counted(old_failed, "request"),
                                version_text(old_pods, "A", context.version_a)));
  }
  if (!new_pods.empty()) {
    parts.push_back(fmt::format("{} on {} before it ended",
                                counted(g.requests.size() - old_failed, "request"),
                                version_text(new_pods, "B", context.version_b)));
  }
  std::string migration;
  if (!facts.migrations().empty()) {
    const MigrationRun& m = facts.migrations().front();
    migration =
        fmt::format("; the migration `{}` ran from {} to {} ({})", m.what, seconds_text(m.started),
                    m.finished ? seconds_text(*m.finished) : "the end",
                    m.outcome.empty() ? "still running" : m.outcome);
  }
  // One quote per version that failed: A and B usually break on different statements.
  std::string said;
  bool both = !old_pods.empty() && !new_pods.empty();
  for (auto [failed, version, body] : {std::tuple{!old_pods.empty(), "A", &old_body},
                                       std::tuple{!new_pods.empty(), "B", &new_body}}) {
    if (failed && !body->empty()) {
      said +=
          fmt::format("; {} answered: \"{}\"",
                      both ? fmt::format("version {}", version) : std::string("the app"), *body);
    }
  }
  if (said.empty()) {
    said = "; the responses carried no body (the pods' logs are in the run folder's pods/)";
  }
  return fmt::format("{} failed ({}){}{}", fmt::join(parts, " and "), classes_text(g.requests),
                     migration, said);
}

std::string unexplained_evidence(const Group& g) {
  std::map<std::string, int> reasons;
  for (const RequestDiagnosis* d : g.diagnoses) {
    ++reasons[d->reason];
  }
  auto top = std::max_element(reasons.begin(), reasons.end(),
                              [](const auto& a, const auto& b) { return a.second < b.second; });
  return fmt::format("{} no rule explains ({}); most common: {} ({})",
                     counted(g.requests.size(), "failure"), classes_text(g.requests), top->first,
                     top->second);
}

std::string evidence_for(const Group& g, const Facts& facts, const RuleContext& context,
                         int min_ready) {
  switch (g.hole) {
    case Hole::deregistration_race:
      return deregistration_evidence(g, facts);
    case Hole::no_drain:
      return no_drain_evidence(g, facts);
    case Hole::grace_overrun:
      return grace_evidence(g, facts, context.drain_evidence);
    case Hole::keepalive_stale:
      return keepalive_evidence(g, facts);
    case Hole::readiness_lies:
      return readiness_evidence(g, facts, context);
    case Hole::capacity_dip:
      return capacity_evidence(g, min_ready, context);
    case Hole::liveness_kills_drain:
      return liveness_evidence(g, facts);
    case Hole::schema_race:
      return schema_evidence(g, facts, context);
    case Hole::proxy_sync_loss:
      return sync_loss_evidence(g);
    case Hole::ingress_reload_reset:
      return reload_evidence(g);
    case Hole::unexplained:
      break;
  }
  return unexplained_evidence(g);
}

HoleSummary summary_of(const Group& g, const Facts& facts, const RuleContext& context,
                       int min_ready) {
  HoleSummary s;
  s.hole = g.hole;
  s.requests = g.requests.size();
  s.first = send_time(*g.requests.front());
  s.last = s.first;
  std::set<std::string> pods, routers;
  for (const RequestRecord* r : g.requests) {
    s.first = std::min(s.first, send_time(*r));
    s.last = std::max(s.last, send_time(*r));
    if (!r->backend.empty()) {
      pods.insert(r->backend);
    }
    if (!r->router.empty()) {
      routers.insert(r->router);
    }
  }
  s.pods.assign(pods.begin(), pods.end());
  s.routers.assign(routers.begin(), routers.end());
  s.evidence = evidence_for(g, facts, context, min_ready);
  return s;
}

}  // namespace

int min_ready_during(const record::RunRecord& run, const std::vector<RequestDiagnosis>& failures,
                     Hole hole, const Facts& facts) {
  std::optional<int> fewest;
  for (const RequestDiagnosis& d : failures) {
    if (d.hole == hole) {
      int ready = facts.ready_pods_at(send_time(run.requests[d.index]));
      fewest = std::min(fewest.value_or(ready), ready);
    }
  }
  return fewest.value_or(0);
}

std::vector<HoleSummary> summarize(const record::RunRecord& run,
                                   const std::vector<RequestDiagnosis>& failures,
                                   const Facts& facts, const RuleContext& context) {
  std::map<Hole, Group> groups;
  for (const RequestDiagnosis& d : failures) {
    Group& g = groups.try_emplace(d.hole, Group{d.hole, {}, {}}).first->second;
    g.requests.push_back(&run.requests[d.index]);
    g.diagnoses.push_back(&d);
  }
  std::vector<HoleSummary> holes;
  for (const auto& [hole, group] : groups) {
    int min_ready = min_ready_during(run, failures, hole, facts);
    holes.push_back(summary_of(group, facts, context, min_ready));
  }
  std::stable_sort(holes.begin(), holes.end(), [](const HoleSummary& a, const HoleSummary& b) {
    bool a_last = a.hole == Hole::unexplained, b_last = b.hole == Hole::unexplained;
    return a_last != b_last ? b_last : a.requests > b.requests;
  });
  return holes;
}

}  // namespace zerodrop::diagnose
