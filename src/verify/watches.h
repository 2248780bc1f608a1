#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "verify/api_client.h"
#include "verify/timeline.h"
#include "verify/watch.h"

namespace zerodrop::verify {

// What one measurement watches in one namespace.
struct WatchSet {
  std::string namespace_name;
  std::string deployment;    // "" = no Deployment watch (zerodrop watch feeds its informer's)
  std::string pod_selector;  // labelSelector query text
  std::string service;       // the EndpointSlices' kubernetes.io/service-name; "" = none
};

// A measurement's watches (the Deployment, its pods, its Service's EndpointSlices and the
// namespace's Events), each listed at construction, in that order (pods before their events), so
// every watch starts from a state, then followed on a thread of its own into the timeline's
// observer until destruction. Throws Error naming a list the API refused.
class Watches {
public:
  Watches(const ApiClient& client, const WatchSet& set, Timeline& timeline);
  ~Watches();
  Watches(const Watches&) = delete;
  Watches& operator=(const Watches&) = delete;

private:
  std::vector<std::unique_ptr<Watcher>> watchers_;
  std::vector<std::thread> threads_;
};

}  // namespace zerodrop::verify
