#include "lab/pods/not_ready.h"

#include <algorithm>
#include <fstream>
#include <map>

#include <fmt/format.h>

namespace zerodrop::lab {
namespace {

using record::EventKind;

// What the events say about one pod.
struct Story {
  std::string address;  // "127.20.0.1:41234"
  bool ready = false;
  bool running = false;
  int starts = 0;
  std::string last_exit;    // "exit code 1"
  std::string probe_error;  // the readiness probe's last words
};

std::vector<std::pair<std::string, Story>> stories(const std::vector<record::Event>& events) {
  std::vector<std::pair<std::string, Story>> out;
  std::map<std::string, size_t> index;
  for (const record::Event& e : events) {
    if (e.pod.empty()) {
      continue;
    }
    auto [it, fresh] = index.try_emplace(e.pod, out.size());
    if (fresh) {
      out.emplace_back(e.pod, Story{});
    }
    Story& s = out[it->second].second;
    if (e.kind == EventKind::pod_created) {
      s.address = e.detail.substr(0, e.detail.find(' '));
    } else if (e.kind == EventKind::pod_started) {
      ++s.starts;
      s.running = true;
    } else if (e.kind == EventKind::pod_exited) {
      s.running = false;
      s.last_exit = e.detail;
    } else if (e.kind == EventKind::pod_ready || e.kind == EventKind::pod_unready) {
      s.ready = e.kind == EventKind::pod_ready;
    } else if (e.kind == EventKind::probe_failed && e.detail.starts_with("readiness: ")) {
      s.probe_error = e.detail.substr(11);
    }
  }
  return out;
}

// The cause, without the pod's name: the same text for pods that failed alike.
std::string cause(const Story& s, const ProbeSpec& readiness) {
  if (!s.last_exit.empty()) {
    std::string restarts =
        s.starts > 1 ? fmt::format(", restarted {} time{}", s.starts - 1, s.starts > 2 ? "s" : "")
                     : std::string();
    return fmt::format("exited with {}{}{}", s.last_exit, restarts,
                       s.running ? " (running again)" : "");
  }
  if (s.probe_error.empty()) {
    return fmt::format("is running, but its readiness probe {} has not passed",
                       readiness.describe());
  }
  switch (readiness.kind) {
    case ProbeSpec::Kind::tcp:
      return fmt::format("is running, but nothing listens on {} (readiness tcp: {})", s.address,
                         s.probe_error);
    case ProbeSpec::Kind::exec:
      return fmt::format(
          "is running, but its readiness probe exec '{}' fails: {} (--readiness "
          "replaces the probe)",
          fmt::join(readiness.command, " "), s.probe_error);
    default:
      return fmt::format("is running, but its readiness probe {} on {} fails: {}",
                         readiness.describe(), s.address, s.probe_error);
  }
}

}  // namespace

std::string why_not_ready(const std::vector<record::Event>& events, const ProbeSpec& readiness,
                          const std::function<std::string(const std::string&)>& pod_log) {
  // Pods grouped by cause, in order of creation; each group quoted by its first pod.
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const auto& [pod, story] : stories(events)) {
    if (story.ready) {
      continue;
    }
    std::string why = cause(story, readiness);
    auto same =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == why; });
    if (same == groups.end()) {
      groups.push_back({why, {pod}});
    } else {
      same->second.push_back(pod);
    }
  }
  std::vector<std::string> clauses;
  for (const auto& [why, pods] : groups) {
    std::string others =
        pods.size() == 1
            ? std::string()
            : fmt::format(" ({} likewise)",
                          fmt::join(std::vector<std::string>(pods.begin() + 1, pods.end()), ", "));
    clauses.push_back(
        fmt::format("pod {} {}{}; log {}", pods.front(), why, others, pod_log(pods.front())));
  }
  if (clauses.empty()) {
    return "every pod is Ready, but not every router has applied it yet";
  }
  return fmt::format("{}", fmt::join(clauses, "; "));
}

std::string image_words(const std::string& image, const std::vector<record::Event>& events,
                        const std::function<std::string(const std::string&)>& pod_log) {
  for (const record::Event& e : events) {
    if (e.kind != EventKind::pod_exited) {
      continue;
    }
    std::ifstream log(pod_log(e.pod));
    std::string line, last;
    while (std::getline(log, line)) {
      last = line.find_first_not_of(" \t\r") == std::string::npos ? last : line;
    }
    return fmt::format(" (image {}: {})", image, last.empty() ? "its log is empty" : last);
  }
  return fmt::format(" (image {})", image);
}

}  // namespace zerodrop::lab
