#include "watch/runs.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "report/markup.h"

namespace zerodrop::watch {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

bool is_run(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec)
         && (fs::exists(dir / "watch.json", ec) || fs::exists(dir / "events.ndjson", ec));
}

// The time part of a name (NS.NAME.TIME[.N]) first, so names sort by time across workloads.
std::pair<std::string, std::string> sort_key(const std::string& name) {
  auto parts = std::vector<std::string>();
  std::stringstream in(name);
  for (std::string p; std::getline(in, p, '.');) {
    parts.push_back(p);
  }
  for (const std::string& p : parts) {
    if (p.size() == 16 && p[8] == 'T' && p.back() == 'Z') {
      return {p, name};
    }
  }
  return {"", name};
}

std::vector<std::string> runs_oldest_first(const std::string& root) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    if (is_run(entry.path())) {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end(),
            [](const auto& a, const auto& b) { return sort_key(a) < sort_key(b); });
  return names;
}

}  // namespace

std::string new_run_name(const std::string& root, const WorkloadKey& key, SystemTime now) {
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  std::string base = fmt::format("{}.{}.{}", key.namespace_name, key.name, stamp);
  std::string name = base;
  std::error_code ec;
  for (int n = 2; fs::exists(fs::path(root) / name, ec); ++n) {
    name = fmt::format("{}.{}", base, n);
  }
  return name;
}

void write_result(const std::string& folder, const RolloutResult& r) {
  EventText e = event_text(r);
  Json j = {{"namespace", r.key.namespace_name},
            {"kind", r.key.kind},
            {"workload", r.key.name},
            {"verdict", verdict_label(r)},
            {"whole", r.whole},
            {"ended", to_string(r.end)},
            {"ended_reason", r.end_reason},
            {"requests", r.verdict.requests},
            {"failed", r.verdict.failed},
            {"agents", r.agents},
            {"agents_lost", r.agents_lost},
            {"event_reason", e.reason},
            {"event_message", e.message}};
  Json holes = Json::object();
  for (const auto& [hole, n] : r.verdict.holes) {
    holes[hole] = n;
  }
  j["holes"] = holes;
  std::string path = folder + "/watch.json";
  std::ofstream out(path);
  out << j.dump(2) << "\n";
  out.close();
  if (!out) {
    throw Error(fmt::format("cannot write {}", path));
  }
}

std::vector<std::string> mark_abandoned(const std::string& root, SystemTime now) {
  std::vector<std::string> marked;
  for (const std::string& name : runs_oldest_first(root)) {
    std::error_code ec;
    if (fs::exists(fs::path(root) / name / "watch.json", ec)) {
      continue;
    }
    // NAMESPACE.NAME.TIME[.N]: a namespace has no dot; a Deployment's name may have some.
    size_t dot = name.find('.');
    std::string stamp = sort_key(name).first;
    size_t at = stamp.empty() ? std::string::npos : name.find("." + stamp);
    std::string workload = dot == std::string::npos || at == std::string::npos || at <= dot
                               ? ""
                               : name.substr(dot + 1, at - dot - 1);
    Json j = {{"namespace", dot == std::string::npos ? "" : name.substr(0, dot)},
              {"workload", workload},
              {"verdict", "abandoned"},
              {"whole", false},
              {"ended", "abandoned"},
              {"ended_reason",
               fmt::format("the watcher measuring it stopped without writing its result (killed: "
                           "SIGKILL, out of memory, its node lost); found by the next leader at {}",
                           micro_time(now))},
              {"event_message",
               "abandoned: the watcher measuring this rollout was killed before the end; no "
               "verdict (a rollout still under way is measured again from the middle, partial, "
               "in a run of its own)"}};
    std::string path = (fs::path(root) / name / "watch.json").string();
    std::ofstream out(path);
    out << j.dump(2) << "\n";
    out.close();
    if (!out) {
      throw Error(fmt::format("cannot write {}", path));
    }
    marked.push_back(name);
  }
  return marked;
}

size_t retain(const std::string& root, size_t keep) {
  std::vector<std::string> names = runs_oldest_first(root);
  size_t removed = 0;
  for (size_t i = 0; i + keep < names.size(); ++i) {
    std::error_code ec;
    fs::remove_all(fs::path(root) / names[i], ec);
    removed += ec ? 0 : 1;
  }
  return removed;
}

std::string index_html(const std::string& root) {
  std::vector<std::string> names = runs_oldest_first(root);
  std::reverse(names.begin(), names.end());
  std::string rows;
  for (const std::string& name : names) {
    std::ifstream in(fs::path(root) / name / "watch.json");
    Json j = Json::parse(in, nullptr, false);
    std::string verdict = j.is_object() ? j.value("verdict", "") : "in progress";
    std::string message = j.is_object() ? j.value("event_message", "") : "";
    // A run ended without its reports (abandoned, or still being measured) links its events.
    std::error_code ec;
    const char* file =
        fs::exists(fs::path(root) / name / "report.html", ec) ? "report.html" : "events.ndjson";
    rows += fmt::format(
        "<tr><td><a href=\"{0}/{3}\">{0}</a></td><td class=\"{1}\">{1}</td>"
        "<td>{2}</td></tr>\n",
        report::escape(name), report::escape(verdict), report::escape(message), file);
  }
  return fmt::format(
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>zerodrop watch: runs</title>"
      "<style>body{{font-family:sans-serif}}td{{padding:2px 8px}}.dropped{{color:#b00}}"
      ".clean{{color:#070}}.partial,.unmeasured,.abandoned{{color:#a60}}</style></head><body>\n"
      "<h1>zerodrop watch: {} runs</h1>\n<table>\n<tr><th>run</th><th>verdict</th>"
      "<th>event</th></tr>\n{}</table>\n</body></html>\n",
      names.size(), rows);
}

std::optional<std::string> run_file(const std::string& root, std::string_view path) {
  size_t slash = path.find('/');
  std::string name(path.substr(0, slash));
  std::string file = slash == std::string_view::npos ? "" : std::string(path.substr(slash + 1));
  if (file.empty()) {
    file = "report.html";
  }
  auto bad = [](const std::string& part) {
    return part.empty() || part == "." || part == ".." || part.find('/') != std::string::npos
           || part.find('\0') != std::string::npos;
  };
  if (bad(name) || bad(file) || !is_run(fs::path(root) / name)) {
    return std::nullopt;
  }
  fs::path full = fs::path(root) / name / file;
  std::error_code ec;
  if (!fs::is_regular_file(full, ec) || fs::is_symlink(full, ec)) {
    return std::nullopt;
  }
  return full.string();
}

}  // namespace zerodrop::watch
