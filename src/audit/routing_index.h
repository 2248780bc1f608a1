#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kube/object.h"

namespace zerodrop::audit {

// A hash of two strings (a label's key and value; a target's kind and name): how the RoutingIndex
// and the Cluster find candidates, which are then checked exactly (a collision costs one check).
uint64_t pair_hash(std::string_view a, std::string_view b);

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
// Ingress and ServiceMonitor between its two passes: not the object, only where it is and hashes of what it
// matches on (tens of bytes each). For a workload it names the documents that may hold an
// object routing to, guarding or scaling it: a superset (hash collisions, other namespaces),
// which the Cluster built from those documents then matches exactly.
class RoutingIndex {
public:
  void add(DocumentRef where, const kube::Object& object);

  // Appends the packed DocumentRefs of every candidate for `w` to `out` (duplicates possible).
  void candidates(const kube::Workload& w, std::vector<uint64_t>& out) const;

  size_t size() const { return entries_; }

private:
  struct LabelEntry {
    uint64_t where;      // packed DocumentRef
    uint64_t name_hash;  // a Service's name (its Ingresses), 0 for a PDB
  };

  std::unordered_multimap<uint64_t, LabelEntry> by_label_;  // Services and PDBs, first label
  std::vector<uint64_t> scanned_;  // PDBs without matchLabels, ServiceMonitors
  std::unordered_multimap<uint64_t, uint64_t> by_target_;   // HPAs by target kind and name
  std::unordered_multimap<uint64_t, uint64_t> by_service_;  // Ingresses by backend Service
  size_t entries_ = 0;
};

}  // namespace zerodrop::audit
