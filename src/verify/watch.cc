#include "verify/watch.h"

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::verify {
namespace {

std::optional<WatchType> type_of(std::string_view name) {
  if (name == "ADDED") {
    return WatchType::added;
  }
  if (name == "MODIFIED") {
    return WatchType::modified;
  }
  if (name == "DELETED") {
    return WatchType::deleted;
  }
  if (name == "BOOKMARK") {
    return WatchType::bookmark;
  }
  if (name == "ERROR") {
    return WatchType::error;
  }
  return std::nullopt;
}

std::string with_query(const WatchTarget& target, const std::string& rest) {
  std::string query = target.selector;
  if (!rest.empty()) {
    query += (query.empty() ? "" : "&") + rest;
  }
  return query.empty() ? target.path : target.path + "?" + query;
}

}  // namespace

std::vector<std::string> LineDecoder::feed(std::string_view data) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl = data.find('\n'); nl != std::string_view::npos; nl = data.find('\n', start)) {
    partial_.append(data.substr(start, nl - start));
    lines.push_back(std::move(partial_));
    partial_.clear();
    start = nl + 1;
  }
  partial_.append(data.substr(start));
  if (partial_.size() > kMaxLine) {
    throw Error(fmt::format("a watch event is longer than {} bytes", kMaxLine));
  }
  return lines;
}

std::optional<WatchEvent> parse_watch_line(std::string_view line) {
  auto json = nlohmann::json::parse(line, nullptr, false);
  if (!json.is_object() || !json.contains("type") || !json["type"].is_string()
      || !json.contains("object") || !json["object"].is_object()) {
    return std::nullopt;
  }
  auto type = type_of(json["type"].get<std::string>());
  if (!type) {
    return std::nullopt;
  }
  return WatchEvent{*type, std::move(json["object"])};
}

std::string resource_version(const nlohmann::json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) {
    return {};
  }
  auto rv = meta->find("resourceVersion");
  return rv != meta->end() && rv->is_string() ? rv->get<std::string>() : std::string();
}

Watcher::Watcher(const ApiClient& client, WatchTarget target, OnEvent on_event, OnNote on_note)
    : client_(client),
      target_(std::move(target)),
      on_event_(std::move(on_event)),
      on_note_(std::move(on_note)) {}

void Watcher::list() {
  ApiResponse response = client_.get(with_query(target_, ""));
  if (!response.ok()) {
    throw Error(fmt::format("cannot list {}: {}", target_.what, error_text(response)));
  }
  auto json = nlohmann::json::parse(response.body, nullptr, false);
  if (!json.is_object() || !json.contains("items") || !json["items"].is_array()) {
    throw Error(fmt::format("cannot list {}: the answer is not a list", target_.what));
  }
  version_ = resource_version(json);
  for (auto& item : json["items"]) {
    on_event_(WatchEvent{WatchType::listed, std::move(item)});
  }
}

bool Watcher::on_line(const std::string& line, bool& gone) {
  auto event = parse_watch_line(line);
  if (!event) {
    return true;
  }
  if (event->type == WatchType::error) {
    auto code = event->object.value("code", 0);
    gone = code == 410;
    if (!gone) {
      on_note_(fmt::format("watch of {} ended with an error: {}", target_.what,
                           event->object.value("message", std::string("(no message)"))));
    }
    return false;
  }
  std::string rv = resource_version(event->object);
  if (!rv.empty()) {
    version_ = rv;
  }
  if (event->type != WatchType::bookmark) {
    on_event_(*event);
  }
  return true;
}

bool Watcher::watch_once() {
  LineDecoder decoder;
  bool gone = false;
  std::string query = fmt::format("watch=true&allowWatchBookmarks=true&timeoutSeconds=300{}",
                                  version_.empty() ? "" : "&resourceVersion=" + version_);
  ApiResponse response = client_.stream(
      with_query(target_, query),
      [&](std::string_view data) {
        for (const std::string& line : decoder.feed(data)) {
          if (!on_line(line, gone)) {
            return false;
          }
        }
        return true;
      },
      cancel_);
  if (response.status != 0 && !response.ok() && response.status != 410) {
    throw Error(fmt::format("watch refused: {}", error_text(response)));
  }
  return !gone && response.status != 410;
}

void Watcher::watch() {
  while (!cancel_.cancelled()) {
    bool resumable = true;
    try {
      resumable = watch_once();
    } catch (const Error& e) {
      if (cancel_.cancelled()) {
        return;
      }
      on_note_(fmt::format("watch of {}: {}", target_.what, e.what()));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the proxy may be restarting
    }
    if (cancel_.cancelled()) {
      return;
    }
    if (resumable) {
      ++resumes_;
      // A server that ends watches at once must not turn this loop into a busy one.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    // The version left the server's history: what changed in between was not seen.
    ++relists_;
    on_note_(
        fmt::format("watch of {} fell behind the server's history (410): listed again; "
                    "changes in between may be missing",
                    target_.what));
    try {
      list();
    } catch (const Error& e) {
      on_note_(e.what());
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
}

}  // namespace zerodrop::verify
