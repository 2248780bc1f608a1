#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "record/run_record.h"

namespace zerodrop::lab {

// One endpoint of the Service, as an EndpointSlice lists it.
struct Endpoint {
  std::string pod;
  std::string ip;
  uint16_t port = 0;
  record::Conditions conditions;
};

// A change the endpoint controller publishes: an endpoint's new conditions, or its removal.
struct EndpointChange {
  Endpoint endpoint;
  bool removed = false;
};

// One router's view of the endpoints, with kube-proxy's choice (pkg/proxy/topology.go,
// CategorizeEndpoints): Ready endpoints; only when none is Ready, serving ∧ terminating ones.
// Not thread-safe: each router owns one.
class EndpointTable {
public:
  void apply(const EndpointChange& change);
  // The endpoints new connections may go to, in the order they were first added.
  std::vector<const Endpoint*> usable() const;
  const Endpoint* find(const std::string& pod) const;

  size_t size() const { return endpoints_.size(); }

private:
  std::vector<Endpoint> endpoints_;
};

}  // namespace zerodrop::lab
