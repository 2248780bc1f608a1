#include "lab/endpoint_table.h"

#include <algorithm>

namespace zerodrop::lab {

void EndpointTable::apply(const EndpointChange& change) {
  auto it = std::find_if(endpoints_.begin(), endpoints_.end(),
                         [&](const Endpoint& e) { return e.pod == change.endpoint.pod; });
  if (change.removed) {
    if (it != endpoints_.end()) {
      endpoints_.erase(it);
    }
  } else if (it == endpoints_.end()) {
    endpoints_.push_back(change.endpoint);
  } else {
    *it = change.endpoint;
  }
}

std::vector<const Endpoint*> EndpointTable::usable() const {
  std::vector<const Endpoint*> ready;
  std::vector<const Endpoint*> serving_terminating;
  for (const Endpoint& e : endpoints_) {
    if (e.conditions.ready) {
      ready.push_back(&e);
    } else if (e.conditions.serving && e.conditions.terminating) {
      serving_terminating.push_back(&e);
    }
  }
  return ready.empty() ? serving_terminating : ready;
}

const Endpoint* EndpointTable::find(const std::string& pod) const {
  auto it = std::find_if(endpoints_.begin(), endpoints_.end(),
                         [&](const Endpoint& e) { return e.pod == pod; });
  return it == endpoints_.end() ? nullptr : &*it;
}

}  // namespace zerodrop::lab
