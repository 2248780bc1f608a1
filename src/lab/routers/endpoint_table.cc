#include "lab/routers/endpoint_table.h"

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

Clock::time_point PropagationSchedule::add(EndpointChange change, Clock::time_point now,
                                           Duration delay) {
  last_due_ = std::max(now + delay, last_due_);
  pending_.emplace_back(last_due_, std::move(change));
  return last_due_;
}

std::vector<EndpointChange> PropagationSchedule::take_due(Clock::time_point now) {
  std::vector<EndpointChange> due;
  while (!pending_.empty() && pending_.front().first <= now) {
    due.push_back(std::move(pending_.front().second));
    pending_.pop_front();
  }
  return due;
}

}  // namespace zerodrop::lab
