#include "audit/routing_index.h"

#include <functional>
#include <unordered_map>

namespace zerodrop::audit {

uint64_t pair_hash(std::string_view a, std::string_view b) {
  uint64_t h = std::hash<std::string_view>{}(a);
  return (h * 0x9E3779B97F4A7C15ULL) ^ std::hash<std::string_view>{}(b);
}

uint64_t NamespacedMultimap::in_namespace(std::string_view ns, uint64_t key) {
  return pair_hash(ns, "") * 0xC2B2AE3D27D4EB4FULL ^ key;
}

void NamespacedMultimap::add(std::string_view ns, uint64_t key, uint64_t value) {
  by_ns_key_.emplace_back(in_namespace(ns, key), value);
  by_key_.emplace_back(key, value);
  sorted_ = false;
}

void NamespacedMultimap::sort() const {
  if (!sorted_) {
    std::sort(by_ns_key_.begin(), by_ns_key_.end());
    std::sort(by_key_.begin(), by_key_.end());
    sorted_ = true;
  }
}

void SelectorIndex::add(std::string_view ns, const kube::Labels& selector, uint64_t value) {
  pending_.push_back({std::string(ns), value, pairs_.size()});
  for (const auto& [key, label] : selector) {
    pairs_.push_back(pair_hash(key, label));
  }
}

void SelectorIndex::file_pending() const {
  if (pending_.empty()) {
    return;
  }
  // How many selectors of the batch hold each pair in their namespace.
  std::unordered_map<uint64_t, uint32_t> shared;
  auto range = [&](size_t i) {
    size_t end = i + 1 < pending_.size() ? pending_[i + 1].first_pair : pairs_.size();
    return std::pair{pairs_.begin() + static_cast<ptrdiff_t>(pending_[i].first_pair),
                     pairs_.begin() + static_cast<ptrdiff_t>(end)};
  };
  for (size_t i = 0; i < pending_.size(); ++i) {
    uint64_t ns = pair_hash(pending_[i].ns, "");
    for (auto [it, end] = range(i); it != end; ++it) {
      ++shared[ns ^ *it];
    }
  }
  for (size_t i = 0; i < pending_.size(); ++i) {
    uint64_t ns = pair_hash(pending_[i].ns, "");
    uint64_t rarest = kNoPair;
    uint32_t fewest = UINT32_MAX;
    for (auto [it, end] = range(i); it != end; ++it) {
      if (uint32_t n = shared[ns ^ *it]; n < fewest) {
        rarest = *it;
        fewest = n;
      }
    }
    filed_.add(pending_[i].ns, rarest, pending_[i].value);
  }
  pending_.clear();
  pairs_.clear();
}

void RoutingIndex::add(DocumentRef where, const kube::Object& object) {
  uint64_t at = where.packed();
  if (const auto* s = std::get_if<kube::Service>(&object)) {
    if (!s->selector.empty()) {  // a Service without a selector selects no pod
      by_selector_.add(s->meta.namespace_name, s->selector, labelled_.size());
      labelled_.push_back({at, pair_hash("", s->meta.name), s->meta.namespace_name});
      ++entries_;
    }
  } else if (const auto* p = std::get_if<kube::PodDisruptionBudget>(&object)) {
    // Only matchLabels narrow the candidates; matchExpressions are checked on the candidates.
    by_selector_.add(p->meta.namespace_name, p->selector.match_labels, labelled_.size());
    labelled_.push_back({at, 0, p->meta.namespace_name});
    ++entries_;
  } else if (const auto* h = std::get_if<kube::HorizontalPodAutoscaler>(&object)) {
    by_target_.add(h->meta.namespace_name, pair_hash(h->target_kind, h->target_name), at);
    ++entries_;
  } else if (std::holds_alternative<kube::ServiceMonitor>(object)) {
    scanned_.push_back(at);  // it selects Services, not pods: every workload may need it
    ++entries_;
  } else if (const auto* in = std::get_if<kube::Ingress>(&object)) {
    for (const kube::IngressBackend& b : in->backends) {
      by_service_.add(in->meta.namespace_name, pair_hash("", b.service), at);
    }
    ++entries_;
  }
}

void RoutingIndex::candidates(const kube::Workload& w, uint32_t skip,
                              std::vector<uint64_t>& out) const {
  auto keep = [&](uint64_t at) {
    if (DocumentRef::unpack(at).file != skip) {
      out.push_back(at);
    }
  };
  const std::string& ns = w.meta.namespace_name;
  by_selector_.find(ns, w.pod_labels, [&](uint64_t index) {
    const LabelEntry& e = labelled_[index];
    keep(e.where);
    if (e.name_hash != 0) {
      by_service_.find(e.ns, e.name_hash, keep);
    }
  });
  by_target_.find(ns, pair_hash(w.meta.kind, w.meta.name), keep);
  std::for_each(scanned_.begin(), scanned_.end(), keep);
}

}  // namespace zerodrop::audit
