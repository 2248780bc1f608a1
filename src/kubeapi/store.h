#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zerodrop::kubeapi {

// What a watcher receives: ADDED, MODIFIED or DELETED with the object as it was then.
struct WatchEvent {
  uint64_t rv = 0;
  std::string resource;  // the store's key: "pods", "apps/deployments", …
  std::string type;
  nlohmann::json object;
};

// The API server's storage: objects by resource and name, one resourceVersion counter for all
// (as etcd's revision), and a bounded history of changes for watches. Each stored object carries
// its metadata.resourceVersion as a string. Thread-safe; no method calls out while locked.
class Store {
public:
  // Keeps the last `history` changes; a watch from before them gets nullopt (410 Gone).
  explicit Store(size_t history = 10000);

  // Adds or replaces the object named by its metadata.name. No change and no event when the
  // object equals the stored one apart from its resourceVersion. Returns the stored object.
  nlohmann::json put(const std::string& resource, nlohmann::json object);
  // Adds the object only when none of its name exists, at once (two clients creating the same
  // Lease: one wins). nullopt when one exists. Returns the stored object.
  std::optional<nlohmann::json> create(const std::string& resource, nlohmann::json object);
  // Applies `change` to a copy of the stored object and stores it as put() does; nullopt when
  // there is no such object or `change` returns false (nothing stored).
  std::optional<nlohmann::json> update(const std::string& resource, const std::string& name,
                                       const std::function<bool(nlohmann::json&)>& change);
  // Removes the object (a DELETED event carrying its last state, with a new resourceVersion).
  void erase(const std::string& resource, const std::string& name);

  std::optional<nlohmann::json> get(const std::string& resource, const std::string& name) const;

  struct List {
    std::vector<nlohmann::json> items;  // by name
    uint64_t rv = 0;                    // the store's resourceVersion at the time of the list
  };

  List list(const std::string& resource) const;

  // The changes of `resource` after `rv`, oldest first; nullopt when changes after `rv` have
  // already left the history (the client must list again).
  std::optional<std::vector<WatchEvent>> since(const std::string& resource, uint64_t rv) const;

  uint64_t resource_version() const;
  // Blocks until the resourceVersion passes `rv`, `deadline` passes or close() is called;
  // returns the resourceVersion then.
  uint64_t wait_past(uint64_t rv, std::chrono::steady_clock::time_point deadline) const;
  // Wakes every waiter for good: the server is stopping.
  void close();
  bool closed() const;

private:
  void record(const std::string& resource, const std::string& type, const nlohmann::json& object);
  nlohmann::json store_locked(const std::string& resource, nlohmann::json object);

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::map<std::string, std::map<std::string, nlohmann::json>> objects_;
  std::deque<WatchEvent> history_;
  size_t history_limit_;
  uint64_t rv_ = 0;
  uint64_t forgotten_ = 0;  // the newest rv that left the history
  bool closed_ = false;
};

}  // namespace zerodrop::kubeapi
