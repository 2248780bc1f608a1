#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/duration.h"
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

// One router's endpoint changes waiting out their propagation delays. A watch stream is ordered:
// a change is never due before one added earlier, whatever their delays. Not thread-safe.
class PropagationSchedule {
public:
  // Queues `change`, due `delay` after `now` or with the change before it if that one is due
  // later; returns when it is due.
  Clock::time_point add(EndpointChange change, Clock::time_point now, Duration delay);
  // Removes and returns the changes due at `now`, in the order they were added.
  std::vector<EndpointChange> take_due(Clock::time_point now);

  size_t pending() const { return pending_.size(); }

private:
  Clock::time_point last_due_{};
  std::deque<std::pair<Clock::time_point, EndpointChange>> pending_;  // in due order
};

}  // namespace zerodrop::lab
