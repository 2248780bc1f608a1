#pragma once

#include <string>
#include <vector>

namespace zerodrop::kubeapi {

class Store;

// An object the garbage collector deleted: its resource (the Store's key) and name.
struct Collected {
  std::string resource;
  std::string name;
  std::string owner;  // "configmap/NAME": the owner that is gone (the first one listed)
};

// One pass of Kubernetes' garbage collector over the objects clients create (ConfigMaps, RBAC
// objects, ServiceAccounts, Jobs): each whose ownerReferences all name owners that no longer
// exist (same kind, name and uid) is deleted, as the real collector's background deletion does;
// an owner of a kind the lab does not serve counts as present. Repeats until nothing more goes
// (a chain of owners). Returns what it deleted; Jobs' pods are the caller's (JobRunner's).
std::vector<Collected> collect_garbage(Store& store);

}  // namespace zerodrop::kubeapi
