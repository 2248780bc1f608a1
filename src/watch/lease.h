#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "verify/api_client.h"

namespace zerodrop::watch {

using SystemTime = std::chrono::system_clock::time_point;

// A coordination.k8s.io/v1 Lease's spec, as leader election reads it.
struct LeaseRecord {
  std::string holder;  // spec.holderIdentity, "" = released
  int duration_s = 15;
  std::optional<SystemTime> acquired;
  std::optional<SystemTime> renewed;
  int transitions = 0;
  std::string resource_version;  // the optimistic-concurrency token of the update
};

// What a candidate does on its turn, client-go's rules: no Lease -> create it; ours -> renew;
// released or expired (renewTime + leaseDurationSeconds before now) -> take it over (a
// transition); someone else's, still valid -> follow.
enum class LeaseStep { create, renew, take_over, follow };
LeaseStep decide(const std::optional<LeaseRecord>& current, const std::string& me, SystemTime now);

// The Pod that owns what watch creates (metadata.ownerReferences): the watcher's own, from the
// downward API (POD_NAME, POD_UID), so the garbage collector deletes it with that Pod.
struct PodOwner {
  std::string name;
  std::string uid;
};

// $POD_NAME and $POD_UID when both are set and $POD_NAMESPACE is `namespace_name` (an owner must
// live in its dependent's namespace: the garbage collector deletes a dependent whose owner it
// cannot resolve); else nullopt (a laptop's watch owns nothing).
std::optional<PodOwner> own_pod(const std::string& namespace_name);

LeaseRecord read_lease(const nlohmann::json& lease);
// The Lease object to create or PUT for `record` (with its resourceVersion when it has one),
// owned by `owner` when given (the current holder's Pod: each leader writes itself).
nlohmann::json lease_object(const std::string& namespace_name, const std::string& name,
                            const LeaseRecord& record,
                            const std::optional<PodOwner>& owner = std::nullopt);

// MicroTime: "2026-12-06T20:30:00.123456Z"; the parser takes any RFC 3339 time (fraction and
// offset optional) and returns nullopt for other text.
std::string micro_time(SystemTime t);
std::optional<SystemTime> parse_time(std::string_view text);

// Leader election on a Lease, one replica's side. Not thread-safe: one thread calls tick().
class Elector {
public:
  struct Options {
    std::string namespace_name;
    std::string name = "zerodrop-watch";
    std::string identity;  // this replica: the pod's name, else host-pid
    Duration lease_duration = std::chrono::seconds(15);
    Duration renew_deadline = std::chrono::seconds(10);  // a leader that has not renewed by then
                                                         // steps down
    std::optional<PodOwner> owner;  // written into the Lease while this replica holds it
  };

  Elector(const verify::ApiClient& client, Options options)
      : client_(client), o_(std::move(options)) {}

  // One round (call every ~2 s): reads the Lease and creates, renews or takes it over as
  // decide() says. Returns whether this replica leads now. Throws Error for an answer that is
  // neither success nor conflict (no rights: the one line names the Lease and the verb).
  bool tick(SystemTime now);

  bool leading() const { return leading_; }

  const std::string& holder() const { return holder_; }

private:
  const verify::ApiClient& client_;
  Options o_;
  bool leading_ = false;
  std::string holder_;
  std::optional<std::chrono::steady_clock::time_point> last_renewed_;
};

}  // namespace zerodrop::watch
