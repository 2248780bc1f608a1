#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "kube/object.h"

namespace zerodrop::audit {

// A hash of two strings (a label's key and value; a target's kind and name): how the RoutingIndex
// and the Cluster find candidates, which are then checked exactly (a collision costs one check).
uint64_t pair_hash(std::string_view a, std::string_view b);

// Values filed under a hashed key within a namespace. Objects match only within one namespace,
// and one without a namespace (applied with `-n`) may share any: a lookup in namespace N meets
// the values of N and of "", one in "" meets all. Sorted vectors, sorted on the first lookup
// after adds (not thread-safe); values come out in ascending order per key.
class NamespacedMultimap {
public:
  void add(std::string_view ns, uint64_t key, uint64_t value);

  // Calls fn(value) for every value under `key` that namespace `ns` may see.
  template <typename Fn>
  void find(std::string_view ns, uint64_t key, Fn&& fn) const {
    sort();
    if (ns.empty()) {
      each(by_key_, key, fn);
      return;
    }
    each(by_ns_key_, in_namespace(ns, key), fn);
    each(by_ns_key_, in_namespace("", key), fn);
  }

  size_t size() const { return by_key_.size(); }

private:
  using Entries = std::vector<std::pair<uint64_t, uint64_t>>;  // (key, value)

  static uint64_t in_namespace(std::string_view ns, uint64_t key);
  void sort() const;

  template <typename Fn>
  static void each(const Entries& entries, uint64_t key, Fn& fn) {
    auto first = std::lower_bound(entries.begin(), entries.end(), std::pair{key, uint64_t{0}});
    for (auto it = first; it != entries.end() && it->first == key; ++it) {
      fn(it->second);
    }
  }

  mutable Entries by_ns_key_;  // (hash of namespace and key, value)
  mutable Entries by_key_;     // (key, value), for lookups from ""
  mutable bool sorted_ = true;
};

// Objects with a label selector (Services, PDBs), each filed under one pair of its selector:
// the pair the fewest others of its batch share in its namespace. A workload then meets only the
// selectors filed under one of its own labels, which stay few however many Services share Helm's
// `app.kubernetes.io/instance` or however many namespaces repeat the same labels. A selector
// with no pair (a PDB with only matchExpressions) is met by every workload of its namespace.
// Filing happens on the first lookup after adds (not thread-safe).
class SelectorIndex {
public:
  void add(std::string_view ns, const kube::Labels& selector, uint64_t value);

  // Calls fn(value) for every value that may select `labels` in namespace `ns`: a superset
  // (hash collisions), never the same value twice. Ascending values.
  template <typename Fn>
  void find(std::string_view ns, const kube::Labels& labels, Fn&& fn) const {
    file_pending();
    found_.clear();
    auto keep = [&](uint64_t value) {
      found_.push_back(value);
    };
    filed_.find(ns, kNoPair, keep);
    for (const auto& [key, value] : labels) {
      filed_.find(ns, pair_hash(key, value), keep);
    }
    std::sort(found_.begin(), found_.end());
    found_.erase(std::unique(found_.begin(), found_.end()), found_.end());
    for (uint64_t value : found_) {
      fn(value);
    }
  }

  size_t size() const { return filed_.size() + pending_.size(); }

private:
  struct Pending {
    std::string ns;
    uint64_t value;
    size_t first_pair;  // its pair hashes: pairs_[first_pair .. next entry's first_pair)
  };

  static constexpr uint64_t kNoPair = 0;

  void file_pending() const;

  mutable std::vector<Pending> pending_;
  mutable std::vector<uint64_t> pairs_;
  mutable NamespacedMultimap filed_;
  mutable std::vector<uint64_t> found_;
};

// Where a routing object was read: the file's position in the input list and the index of the
// document in that file (kube::Loaded::documents).
struct DocumentRef {
  uint32_t file = 0;
  uint32_t document = 0;

  uint64_t packed() const { return uint64_t{file} << 32 | document; }

  static DocumentRef unpack(uint64_t v) {
    return {static_cast<uint32_t>(v >> 32), static_cast<uint32_t>(v)};
  }
};

// What a streamed audit keeps of every Service, PodDisruptionBudget, HorizontalPodAutoscaler,
// Ingress and ServiceMonitor between its two passes: not the object, only where it is and hashes
// of what it matches on (tens of bytes each). For a workload it names the documents that may hold
// an object routing to, guarding or scaling it: a superset (hash collisions), which the Cluster
// built from those documents then matches exactly.
class RoutingIndex {
public:
  void add(DocumentRef where, const kube::Object& object);

  // Appends the packed DocumentRefs of every candidate for `w` outside file `skip` (the file
  // being audited, whose objects are at hand) to `out` (duplicates possible).
  void candidates(const kube::Workload& w, uint32_t skip, std::vector<uint64_t>& out) const;

  size_t size() const { return entries_; }

private:
  struct LabelEntry {
    uint64_t where;      // packed DocumentRef
    uint64_t name_hash;  // a Service's name (its Ingresses), 0 for a PDB
    std::string ns;
  };

  std::vector<LabelEntry> labelled_;  // Services and PDBs
  SelectorIndex by_selector_;         // index into labelled_
  std::vector<uint64_t> scanned_;     // ServiceMonitors: they select Services, not pods
  NamespacedMultimap by_target_;      // HPAs by target kind and name
  NamespacedMultimap by_service_;     // Ingresses by backend Service
  size_t entries_ = 0;
};

}  // namespace zerodrop::audit
