#include "kube/serving.h"

#include <fmt/format.h>

#include "base/error.h"
#include "kube/rollout.h"

namespace zerodrop::kube {
namespace {

std::string named(const Workload& w) {
  return fmt::format("{} '{}'", to_string(w.kind), w.meta.name);
}

}  // namespace

std::string where(const std::string& file, Mark mark) {
  if (mark.line == 0) {
    return file;
  }
  return fmt::format("{}:{}:{}", file, mark.line, mark.column);
}

const Container& serving_container(const Workload& w, std::string_view name) {
  for (const Container& c : w.containers) {
    if (name.empty() && !c.sidecar) {
      return c;
    }
    if (!name.empty() && c.name == name) {
      if (c.sidecar) {
        throw Error(
            fmt::format("{}: container '{}' of {} is a native sidecar (an init container "
                        "with restartPolicy: Always); it stops after the main "
                        "containers, so it cannot be the serving container",
                        where(w.meta.file, c.marks.self), name, named(w)));
      }
      return c;
    }
  }
  Mark at = w.marks.at("pod.spec");
  if (name.empty()) {
    throw Error(fmt::format("{}: {} has no container", where(w.meta.file, at), named(w)));
  }
  throw Error(fmt::format("{}: {} has no container '{}'", where(w.meta.file, at), named(w), name));
}

void require_rolling_update(const Workload& w) {
  if (w.runs_to_completion()) {
    throw Error(
        fmt::format("{}: {} runs to completion and is never rolled; lab and sim roll a "
                    "Deployment, StatefulSet, DaemonSet or Rollout",
                    where(w.meta.file, w.meta.marks.self), named(w)));
  }
  const Strategy& s = w.strategy;
  if (s.type == "Recreate" || s.type == "OnDelete") {
    throw Error(
        fmt::format("{}: strategy {} of {} is not a rolling update; lab and sim roll "
                    "RollingUpdate only",
                    where(w.meta.file, s.marks.at("type")), s.type, named(w)));
  }
  if (s.max_surge && s.max_unavailable) {
    if (auto why = invalid_limits(*s.max_surge, *s.max_unavailable)) {
      throw Error(fmt::format("{}: {}: {}", where(w.meta.file, s.marks.at("maxUnavailable")),
                              named(w), *why));
    }
  }
}

}  // namespace zerodrop::kube
