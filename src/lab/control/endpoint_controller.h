#pragma once

#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/delay_distribution.h"
#include "lab/routers/endpoint_table.h"

namespace zerodrop::lab {

class Recorder;
class Router;

// The EndpointSlice controller: keeps each pod's conditions (KEP-1672: a terminating endpoint is
// ready=false, serving=its readiness, terminating=true; it leaves the slice when the pod object
// is deleted) and hands every change to every router with that router's own propagation delay.
// Records endpoint_changed. Not thread-safe: call from the control thread.
class EndpointController {
public:
  EndpointController(Recorder& recorder, std::vector<Router*> routers,
                     DelayDistribution propagation, uint64_t seed);

  // Publishes the pod's endpoint with these conditions if they differ from the last published.
  void publish(const Endpoint& endpoint);
  // Publishes the removal of the pod's endpoint (the pod object is gone).
  void remove(const std::string& pod);

  // When the last change published so far will have been applied by every router (on the
  // recorder's clock).
  Clock::time_point settled_at() const { return settled_at_; }

private:
  void send(const EndpointChange& change);

  Recorder& recorder_;
  std::vector<Router*> routers_;
  DelayDistribution propagation_;
  std::mt19937_64 rng_;
  std::map<std::string, Endpoint> published_;
  Clock::time_point settled_at_{};
};

// The conditions of a pod as the controller derives them from kubelet's view.
record::Conditions conditions_of(bool ready, bool terminating);

}  // namespace zerodrop::lab
