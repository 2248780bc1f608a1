#include "kubeapi/api.h"

#include <algorithm>
#include <map>

#include <boost/url/parse.hpp>
#include <fmt/format.h>

#include "base/error.h"
#include "kubeapi/admission.h"

namespace zerodrop::kubeapi {

using nlohmann::json;

namespace {

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 1;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string part = path.substr(start, slash == std::string::npos ? slash : slash - start);
    if (!part.empty()) {
      out.push_back(part);
    }
    if (slash == std::string::npos) {
      break;
    }
    start = slash + 1;
  }
  return out;
}

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

HttpResponse ok(const json& j) {
  return {200, dump(j) + "\n", "application/json"};
}

std::string verb_of(const std::string& method, bool named, bool watch) {
  if (method == "GET") {
    return named ? "get" : watch ? "watch" : "list";
  }
  static const std::map<std::string, std::string> verbs = {
      {"POST", "create"}, {"PATCH", "patch"}, {"PUT", "update"}, {"DELETE", "delete"}};
  auto it = verbs.find(method);
  return it == verbs.end() ? "" : it->second;
}

}  // namespace

HttpResponse status_response(int code, const std::string& reason, const std::string& message) {
  json s = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
            {"status", "Failure"}, {"message", message}, {"reason", reason},
            {"code", code}};
  return {code, dump(s) + "\n", "application/json"};
}

Api::Api(Store& store, ClusterInfo info, ApiOptions options, LabHooks hooks)
    : store_(store),
      info_(std::move(info)),
      options_(std::move(options)),
      hooks_(std::move(hooks)) {}

Reply Api::handle(const HttpRequest& request) {
  if (request.authorization != "Bearer " + options_.token) {
    return status_response(401, "Unauthorized", "Unauthorized");
  }
  auto url = boost::urls::parse_origin_form(request.target);
  if (!url) {
    return status_response(400, "BadRequest", "malformed request target");
  }
  std::string path = url->path();
  std::vector<std::string> parts = segments(path);
  bool core = parts.size() >= 2 && parts[0] == "api" && parts[1] == "v1";
  bool grouped = parts.size() >= 3 && parts[0] == "apis";
  size_t head = core ? 2 : 3;
  if ((!core && !grouped) || parts.size() == head) {
    return discovery(path);
  }
  std::string group = core ? "" : parts[1];
  std::string version = core ? "v1" : parts[2];
  std::vector<std::string> rest(parts.begin() + static_cast<long>(head), parts.end());
  Route route;
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    route.ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  std::string name = rest[0];
  if (rest.size() == 3) {
    name += "/" + rest[2];  // a subresource: pods/log, deployments/scale
  }
  route.type = find_resource(group, version, name);
  if (route.type == nullptr || rest.size() > 3) {
    return status_response(404, "NotFound", fmt::format("the server could not find {}", path));
  }
  route.name = rest.size() >= 2 ? rest[1] : "";
  for (auto param : url->params()) {
    route.query[param.key] = param.value;
  }
  bool watch = route.query["watch"] == "true" || route.query["watch"] == "1";
  route.verb = verb_of(request.method, !route.name.empty(), watch);
  return resource(route, request);
}

HttpResponse Api::discovery(const std::string& path) const {
  json doc;
  std::vector<std::string> parts = segments(path);
  if (path == "/version" || path == "/version/") {
    doc = version_info(info_.k8s_version);
  } else if (path == "/healthz" || path == "/livez" || path == "/readyz") {
    return {200, "ok", "text/plain"};
  } else if (parts.size() == 1 && parts[0] == "api") {
    doc = api_versions(options_.server_address);
  } else if (parts.size() == 1 && parts[0] == "apis") {
    doc = api_group_list();
  } else if (parts.size() == 2 && parts[0] == "api") {
    doc = api_resource_list("", parts[1]);
  } else if (parts.size() == 3 && parts[0] == "apis") {
    doc = api_resource_list(parts[1], parts[2]);
  }
  if (doc.is_null()) {
    return status_response(404, "NotFound", fmt::format("the server could not find {}", path));
  }
  return ok(doc);
}

Reply Api::resource(const Route& route, const HttpRequest& request) {
  const ResourceType& t = *route.type;
  std::string key = route.verb + "/" + t.name;
  if (options_.deny.count(key) > 0 || options_.deny.count("*/" + t.name) > 0) {
    return status_response(
        403, "Forbidden",
        fmt::format("{}{} \"{}\" is forbidden: User \"zerodrop-lab\" cannot {} resource \"{}\" in "
                    "API group \"{}\" in the namespace \"{}\"",
                    t.name, t.group.empty() ? "" : "." + t.group, route.name, route.verb, t.name,
                    t.group, route.ns));
  }
  if (std::find(t.verbs.begin(), t.verbs.end(), route.verb) == t.verbs.end()) {
    return status_response(405, "MethodNotAllowed",
                           fmt::format("the lab does not {} {}", route.verb, t.name));
  }
  try {
    if (route.verb == "watch") {
      WatchStream w;
      w.type = &t;
      w.ns = route.ns;
      w.selector = Selector::parse(
          route.query.count("labelSelector") ? route.query.at("labelSelector") : "",
          route.query.count("fieldSelector") ? route.query.at("fieldSelector") : "");
      std::string rv =
          route.query.count("resourceVersion") ? route.query.at("resourceVersion") : "";
      if (!rv.empty() && rv != "0") {
        w.since = std::stoull(rv);
      }
      w.bookmarks = route.query.count("allowWatchBookmarks") > 0
                    && route.query.at("allowWatchBookmarks") == "true";
      w.table = wants_table(request.accept);
      if (route.query.count("timeoutSeconds") > 0) {
        w.timeout = std::chrono::seconds(std::stoll(route.query.at("timeoutSeconds")));
      }
      return w;
    }
    if (t.name == "pods/log") {
      if (!store_.get(t.store_key.empty() ? "pods" : t.store_key, route.name) || !hooks_.log_path) {
        return status_response(404, "NotFound", fmt::format("pods \"{}\" not found", route.name));
      }
      return LogStream{route.name, hooks_.log_path(route.name),
                       route.query.count("follow") > 0 && route.query.at("follow") == "true"};
    }
    if (route.verb == "list") {
      return list(route, wants_table(request.accept));
    }
    if (route.verb == "get") {
      return get(route, wants_table(request.accept));
    }
    if (route.verb == "patch") {
      return patch(route, request);
    }
    if (route.verb == "delete") {
      return remove(route, request);
    }
    if (route.verb == "create") {
      return t.served == Served::review ? review(request) : create(route, request);
    }
    return replace(route, request);
  } catch (const std::exception& e) {
    return status_response(400, "BadRequest", e.what());
  }
}

bool Api::selected(const WatchStream& watch, const json& object) const {
  std::string ns = object["metadata"].value("namespace", "");
  return (watch.ns.empty() || ns == watch.ns) && watch.selector.matches(object);
}

json Api::served_form(const ResourceType& type, json object) const {
  if (type.group == "events.k8s.io") {
    return event_to_v1(object);
  }
  return object;
}

HttpResponse Api::list(const Route& route, bool table) {
  const ResourceType& t = *route.type;
  std::vector<json> chosen;
  uint64_t rv = 0;
  auto query = [&route](const char* key) {
    auto it = route.query.find(key);
    return it == route.query.end() ? std::string() : it->second;
  };
  if (!query("continue").empty()) {
    std::optional<Pages> rest = take_pages(query("continue"));
    if (!rest) {
      return status_response(
          410, "Expired",
          "The provided continue parameter is too old to display a consistent list result. You "
          "can start a new list without the continue parameter.");
    }
    chosen = std::move(rest->items);
    rv = rest->rv;
  } else {
    WatchStream scope;
    scope.ns = route.ns;
    scope.selector = Selector::parse(query("labelSelector"), query("fieldSelector"));
    Store::List all = store_.list(t.store_key);
    for (json& item : all.items) {
      if (selected(scope, item)) {
        chosen.push_back(served_form(t, std::move(item)));
      }
    }
    rv = all.rv;
  }
  // limit/continue: the rest of a long list is kept as it was, for the next page.
  size_t limit = query("limit").empty() ? 0 : std::stoul(query("limit"));
  json more = json::object();
  if (limit > 0 && chosen.size() > limit) {
    Pages rest{{std::make_move_iterator(chosen.begin() + static_cast<long>(limit)),
                std::make_move_iterator(chosen.end())},
               rv};
    chosen.resize(limit);
    more["remainingItemCount"] = rest.items.size();
    more["continue"] = keep_pages(std::move(rest));
  }
  if (table) {
    json doc = table_of(t.kind, chosen, rv);
    doc["metadata"].update(more);
    return ok(doc);
  }
  json items = json::array();
  for (json& served : chosen) {
    served.erase("kind");  // list items carry neither, as the API server serves them
    served.erase("apiVersion");
    items.push_back(std::move(served));
  }
  json meta = {{"resourceVersion", std::to_string(rv)}};
  meta.update(more);
  return ok({{"kind", t.kind + "List"},
             {"apiVersion", t.api_version()},
             {"metadata", meta},
             {"items", items}});
}

std::string Api::keep_pages(Pages pages) {
  static constexpr size_t kKept = 64;  // lists being paged at once; older tokens expire (410)
  std::lock_guard lock(pages_mutex_);
  uint64_t id = next_page_id_++;
  pages_[id] = std::move(pages);
  if (pages_.size() > kKept) {
    pages_.erase(pages_.begin());
  }
  return fmt::format("zerodrop-{}", id);
}

std::optional<Api::Pages> Api::take_pages(const std::string& token) {
  static const std::string kPrefix = "zerodrop-";
  if (token.rfind(kPrefix, 0) != 0 || token.size() == kPrefix.size()
      || token.find_first_not_of("0123456789", kPrefix.size()) != std::string::npos) {
    return std::nullopt;
  }
  std::lock_guard lock(pages_mutex_);
  auto it = pages_.find(std::stoull(token.substr(kPrefix.size())));
  if (it == pages_.end()) {
    return std::nullopt;
  }
  Pages pages = std::move(it->second);
  pages_.erase(it);
  return pages;
}

HttpResponse Api::get(const Route& route, bool table) {
  const ResourceType& t = *route.type;
  std::optional<json> object = store_.get(t.store_key, route.name);
  if (!object || (!route.ns.empty() && (*object)["metadata"].value("namespace", "") != route.ns)) {
    return status_response(404, "NotFound", not_found(t, route.name));
  }
  if (t.name == "deployments/scale") {
    return ok(scale_of(*object));
  }
  if (table) {  // `kubectl get KIND NAME` prints the same columns as the list
    uint64_t rv = std::stoull((*object)["metadata"].value("resourceVersion", "0"));
    return ok(table_of(t.kind, {served_form(t, *object)}, rv));
  }
  return ok(served_form(t, *object));
}

std::string Api::watch_line(const WatchStream& watch, const std::string& event_type,
                            const json& object, bool first) const {
  json served = served_form(*watch.type, object);
  if (watch.table && event_type != "BOOKMARK") {
    uint64_t rv = std::stoull(object["metadata"].value("resourceVersion", "0"));
    served = table_of(watch.type->kind, {served}, rv, first ? Headers::include : Headers::omit);
  }
  return dump({{"type", event_type}, {"object", served}}) + "\n";
}

std::string Api::expired_line(uint64_t asked, uint64_t oldest) const {
  json status = {{"kind", "Status"},
                 {"apiVersion", "v1"},
                 {"metadata", json::object()},
                 {"status", "Failure"},
                 {"message", fmt::format("too old resource version: {} ({})", asked, oldest)},
                 {"reason", "Expired"},
                 {"code", 410}};
  return dump({{"type", "ERROR"}, {"object", status}}) + "\n";
}

}  // namespace zerodrop::kubeapi
