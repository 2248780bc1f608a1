#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/api_client.h"

namespace zerodrop::verify {

// Splits a watch body into lines however its chunks cut them. Bounded: a line longer than
// kMaxLine is an Error (no API object is that large).
class LineDecoder {
public:
  static constexpr size_t kMaxLine = 16 << 20;

  // Appends `data` and returns the complete lines it finished, without their '\n'.
  std::vector<std::string> feed(std::string_view data);

private:
  std::string partial_;
};

enum class WatchType { listed, added, modified, deleted, bookmark, error };

// One watch event: `object` is the resource (or, for `error`, a Status).
struct WatchEvent {
  WatchType type = WatchType::added;
  nlohmann::json object;
};

// Parses one line of a watch stream ({"type": "...", "object": {...}}); nullopt for a line
// that is not one (it is skipped and counted by the caller).
std::optional<WatchEvent> parse_watch_line(std::string_view line);

// The resourceVersion of an object, "" when absent. Opaque: compared only for equality.
std::string resource_version(const nlohmann::json& object);

// What to list and watch: a collection path and its selectors (already escaped query text).
struct WatchTarget {
  std::string what;      // "pods", for notes and errors
  std::string path;      // /api/v1/namespaces/NS/pods
  std::string selector;  // "labelSelector=…" or "fieldSelector=…" or ""
};

// Lists a collection, then watches it from the list's resourceVersion with bookmarks; resumes
// from the last version seen when a watch ends, and lists again when the server says the version
// is gone (410). Every object of a list is delivered as `listed`. Run it on its own thread.
class Watcher {
public:
  using OnEvent = std::function<void(const WatchEvent&)>;
  using OnNote = std::function<void(const std::string&)>;

  Watcher(const ApiClient& client, WatchTarget target, OnEvent on_event, OnNote on_note);

  // Lists once, synchronously: throws Error naming the collection when the list is refused.
  void list();
  // Watches until stop(); reports problems through on_note, never throws.
  void watch();

  // Thread-safe.
  void stop() { cancel_.cancel(); }

  // Watch restarts and relists so far (for the run's notes and the tests).
  int resumes() const { return resumes_; }

  int relists() const { return relists_; }

private:
  // One watch request; returns false when the version is gone (410) and a relist is needed.
  bool watch_once();
  bool on_line(const std::string& line, bool& gone);

  const ApiClient& client_;
  WatchTarget target_;
  OnEvent on_event_;
  OnNote on_note_;
  Cancel cancel_;
  std::string version_;
  std::atomic<int> resumes_{0};
  std::atomic<int> relists_{0};
};

}  // namespace zerodrop::verify
