#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/api_client.h"

namespace zerodrop::verify {

// The labels on every object of a run: managed-by zerodrop, the run's id, and `name` (the
// anchor's is "zerodrop-verify", the agents' "zerodrop-verify-agent").
nlohmann::json run_labels(const std::string& run_id, const std::string& name);

// The anchor ConfigMap of run `run_id`: zerodrop-verify-RUN_ID in `namespace_name`, labelled
// (run_labels), its data the run's Deployment and start. Every other object of the run names it
// in its ownerReferences, so one delete removes them all.
nlohmann::json anchor_manifest(const std::string& namespace_name, const std::string& run_id,
                               const std::string& deployment);

// One run's anchor in the cluster: created by the constructor (Error with the API's reason when
// refused), deleted with propagationPolicy Background by the destructor (the garbage collector
// then deletes what it owns) unless keep() was called. Errors on deletion are said on stderr.
class Anchor {
public:
  Anchor(const ApiClient& client, std::string namespace_name, std::string run_id,
         const std::string& deployment);
  ~Anchor();
  Anchor(const Anchor&) = delete;
  Anchor& operator=(const Anchor&) = delete;

  // The ownerReference every object of the run carries.
  nlohmann::json owner_reference() const;

  const std::string& name() const { return name_; }

  // Leaves the anchor (and what it owns) in the cluster: --keep.
  void keep() { kept_ = true; }

private:
  const ApiClient& client_;
  std::string namespace_name_;
  std::string name_;
  std::string uid_;
  bool kept_ = false;
};

// An ownerReference to the ConfigMap `name` with `uid`.
nlohmann::json anchor_reference(const std::string& name, const std::string& uid);

// `zerodrop verify --cleanup`: deletes every anchor in `namespace_name` (Background: the garbage
// collector removes what each owns) and every agents' Job left without an owner (a crashed run of
// an older zerodrop). Returns one line per object removed ("configmap/NAME (run of deploy/web,
// started …; owns job/NAME)"); empty when there was nothing. Throws Error when the API refuses.
std::vector<std::string> cleanup(const ApiClient& client, const std::string& namespace_name);

}  // namespace zerodrop::verify
