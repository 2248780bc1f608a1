#include "kubeapi/store.h"

#include <algorithm>
#include <cassert>

namespace zerodrop::kubeapi {

using nlohmann::json;

namespace {

// Equal apart from metadata.resourceVersion.
bool same_content(json a, json b) {
  a["metadata"].erase("resourceVersion");
  b["metadata"].erase("resourceVersion");
  return a == b;
}

}  // namespace

Store::Store(size_t history) : history_limit_(history) {
  assert(history > 0);  // a watch could never start
}

json Store::put(const std::string& resource, json object) {
  std::lock_guard lock(mutex_);
  return store_locked(resource, std::move(object));
}

std::optional<json> Store::create(const std::string& resource, json object) {
  std::lock_guard lock(mutex_);
  auto& objects = objects_[resource];
  if (objects.count(object["metadata"]["name"].get<std::string>()) > 0) {
    return std::nullopt;
  }
  return store_locked(resource, std::move(object));
}

json Store::store_locked(const std::string& resource, json object) {
  std::string name = object["metadata"]["name"].get<std::string>();
  auto& objects = objects_[resource];
  auto it = objects.find(name);
  if (it != objects.end() && same_content(it->second, object)) {
    return it->second;
  }
  object["metadata"]["resourceVersion"] = std::to_string(rv_ + 1);
  record(resource, it == objects.end() ? "ADDED" : "MODIFIED", object);
  objects[name] = object;
  return object;
}

std::optional<json> Store::update(const std::string& resource, const std::string& name,
                                  const std::function<bool(json&)>& change) {
  std::lock_guard lock(mutex_);
  auto& objects = objects_[resource];
  auto it = objects.find(name);
  if (it == objects.end()) {
    return std::nullopt;
  }
  json copy = it->second;
  if (!change(copy)) {
    return std::nullopt;
  }
  return store_locked(resource, std::move(copy));
}

void Store::erase(const std::string& resource, const std::string& name) {
  std::lock_guard lock(mutex_);
  auto& objects = objects_[resource];
  auto it = objects.find(name);
  if (it == objects.end()) {
    return;
  }
  json last = std::move(it->second);
  objects.erase(it);
  last["metadata"]["resourceVersion"] = std::to_string(rv_ + 1);
  record(resource, "DELETED", last);
}

void Store::record(const std::string& resource, const std::string& type, const json& object) {
  ++rv_;
  history_.push_back({rv_, resource, type, object});
  if (history_.size() > history_limit_) {
    forgotten_ = history_.front().rv;
    history_.pop_front();
  }
  changed_.notify_all();
}

std::optional<json> Store::get(const std::string& resource, const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto r = objects_.find(resource);
  if (r == objects_.end()) {
    return std::nullopt;
  }
  auto it = r->second.find(name);
  if (it == r->second.end()) {
    return std::nullopt;
  }
  return it->second;
}

Store::List Store::list(const std::string& resource) const {
  std::lock_guard lock(mutex_);
  List out;
  out.rv = rv_;
  auto r = objects_.find(resource);
  if (r != objects_.end()) {
    for (const auto& [name, object] : r->second) {
      out.items.push_back(object);
    }
  }
  return out;
}

std::optional<std::vector<WatchEvent>> Store::since(const std::string& resource,
                                                    uint64_t rv) const {
  std::lock_guard lock(mutex_);
  if (rv < forgotten_) {
    return std::nullopt;
  }
  std::vector<WatchEvent> out;
  // The history is ordered by rv: skip to the first newer change.
  auto it = std::upper_bound(history_.begin(), history_.end(), rv,
                             [](uint64_t v, const WatchEvent& e) { return v < e.rv; });
  for (; it != history_.end(); ++it) {
    if (it->resource == resource) {
      out.push_back(*it);
    }
  }
  return out;
}

uint64_t Store::resource_version() const {
  std::lock_guard lock(mutex_);
  return rv_;
}

uint64_t Store::wait_past(uint64_t rv, std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock lock(mutex_);
  changed_.wait_until(lock, deadline, [&] { return closed_ || rv_ > rv; });
  return rv_;
}

void Store::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  changed_.notify_all();
}

bool Store::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

}  // namespace zerodrop::kubeapi
