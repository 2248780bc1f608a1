#include "audit/routing_index.h"

#include <functional>

namespace zerodrop::audit {

uint64_t pair_hash(std::string_view a, std::string_view b) {
  uint64_t h = std::hash<std::string_view>{}(a);
  return (h * 0x9E3779B97F4A7C15ULL) ^ std::hash<std::string_view>{}(b);
}

void RoutingIndex::add(DocumentRef where, const kube::Object& object) {
  uint64_t at = where.packed();
  if (const auto* s = std::get_if<kube::Service>(&object)) {
    if (!s->selector.empty()) {  // a Service without a selector selects no pod
      const auto& [key, value] = *s->selector.begin();
      by_label_.emplace(pair_hash(key, value), LabelEntry{at, pair_hash("", s->meta.name)});
      ++entries_;
    }
  } else if (const auto* p = std::get_if<kube::PodDisruptionBudget>(&object)) {
    if (p->selector.match_labels.empty()) {
      scanned_.push_back(at);
    } else {
      const auto& [key, value] = *p->selector.match_labels.begin();
      by_label_.emplace(pair_hash(key, value), LabelEntry{at, 0});
    }
    ++entries_;
  } else if (const auto* h = std::get_if<kube::HorizontalPodAutoscaler>(&object)) {
    by_target_.emplace(pair_hash(h->target_kind, h->target_name), at);
    ++entries_;
  } else if (std::holds_alternative<kube::ServiceMonitor>(object)) {
    scanned_.push_back(at);  // it selects Services, not pods: every workload may need it
    ++entries_;
  } else if (const auto* in = std::get_if<kube::Ingress>(&object)) {
    for (const kube::IngressBackend& b : in->backends) {
      by_service_.emplace(pair_hash("", b.service), at);
    }
    ++entries_;
  }
}

void RoutingIndex::candidates(const kube::Workload& w, std::vector<uint64_t>& out) const {
  for (const auto& [key, value] : w.pod_labels) {
    auto [first, last] = by_label_.equal_range(pair_hash(key, value));
    for (auto it = first; it != last; ++it) {
      out.push_back(it->second.where);
      if (it->second.name_hash != 0) {
        auto [in_first, in_last] = by_service_.equal_range(it->second.name_hash);
        for (auto in = in_first; in != in_last; ++in) {
          out.push_back(in->second);
        }
      }
    }
  }
  out.insert(out.end(), scanned_.begin(), scanned_.end());
  auto [first, last] = by_target_.equal_range(pair_hash(w.meta.kind, w.meta.name));
  for (auto it = first; it != last; ++it) {
    out.push_back(it->second);
  }
}

}  // namespace zerodrop::audit
