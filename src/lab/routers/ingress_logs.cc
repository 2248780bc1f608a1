#include "lab/routers/ingress_logs.h"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "http/router_log.h"

namespace zerodrop::lab {
namespace {

using record::Micros;

constexpr Micros kClockSlack = http::kLogClockSlack;
constexpr Micros kHaproxyMatch = http::kHaproxyLineMatch;

std::vector<std::string> lines_of(std::istream& in) {
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    out.push_back(std::move(line));
  }
  return out;
}

std::string detail(std::string_view file, const std::string& line) {
  return fmt::format("{} {}: {}", record::kRouterLog, file, line);
}

// A request nginx cut on a kept-alive client connection: no response at all, no pod named.
bool cut_on_kept_alive(const IngressFailure& f) {
  return f.connection == record::Connection::reused && !f.router_answered && !f.pod_named
         && (f.outcome == record::Outcome::closed_before_response
             || f.outcome == record::Outcome::reset_before_response);
}

void add_once(std::vector<RouterLogNote>& notes, RouterLogNote note) {
  if (std::find(notes.begin(), notes.end(), note) == notes.end()) {
    notes.push_back(std::move(note));
  }
}

}  // namespace

std::vector<RouterLogNote> haproxy_notes(std::istream& log,
                                         const std::vector<IngressFailure>& failures,
                                         std::chrono::microseconds wall_origin) {
  std::vector<std::pair<http::HaproxyLogLine, std::string>> parsed;
  for (std::string& line : lines_of(log)) {
    if (auto p = http::parse_haproxy_log_line(line); p && p->status >= 500) {
      parsed.emplace_back(*p, std::move(line));
    }
  }
  std::vector<RouterLogNote> notes;
  for (const IngressFailure& f : failures) {
    if (!f.router_answered) {
      continue;
    }
    const std::string* best = nullptr;
    Micros best_end{0};
    for (const auto& [p, line] : parsed) {
      Micros end = p.accepted + p.total - wall_origin;
      if (p.client_port == f.client_port && p.status == f.status
          && (best == nullptr
              || std::chrono::abs(end - f.done) < std::chrono::abs(best_end - f.done))) {
        best = &line;
        best_end = end;
      }
    }
    if (best != nullptr && std::chrono::abs(best_end - f.done) <= kHaproxyMatch) {
      add_once(notes, {best_end, detail("haproxy.log", *best)});
    }
  }
  std::sort(notes.begin(), notes.end(), [](const auto& a, const auto& b) { return a.t < b.t; });
  return notes;
}

std::vector<RouterLogNote> nginx_notes(std::istream& access, std::istream& error,
                                       const std::vector<RetiredWorker>& retired,
                                       const std::vector<IngressFailure>& failures,
                                       std::chrono::microseconds wall_origin) {
  std::vector<std::pair<http::NginxAccessLine, std::string>> served;
  for (std::string& line : lines_of(access)) {
    if (auto p = http::parse_nginx_access_line(line)) {
      served.emplace_back(*p, std::move(line));
    }
  }
  std::map<int, std::string> shutdown_of;  // worker pid -> its "gracefully shutting down" line
  for (std::string& line : lines_of(error)) {
    if (auto p = http::parse_nginx_error_line(line); p && p->message == http::kNginxShuttingDown) {
      shutdown_of.emplace(p->pid, std::move(line));
    }
  }
  std::vector<RouterLogNote> notes;
  for (const IngressFailure& f : failures) {
    if (!cut_on_kept_alive(f)) {
      continue;
    }
    // The connection's last request before this one, within nginx's keep-alive timeout.
    const std::pair<http::NginxAccessLine, std::string>* last = nullptr;
    for (const auto& s : served) {
      Micros logged = s.first.logged - wall_origin;
      if (s.first.client_port == f.client_port && logged <= f.sent + kClockSlack
          && f.sent - logged < http::kNginxKeepaliveTimeout
          && (last == nullptr || s.first.logged > last->first.logged)) {
        last = &s;
      }
    }
    if (last == nullptr) {
      continue;
    }
    Micros logged = last->first.logged - wall_origin;
    add_once(notes, {logged, detail("access.log", last->second)});
    auto shutdown = shutdown_of.find(last->first.pid);
    for (const RetiredWorker& w : retired) {
      if (w.pid == last->first.pid && shutdown != shutdown_of.end()
          && w.seen >= logged - kClockSlack && w.running <= f.sent + kClockSlack) {
        add_once(notes, {w.seen, detail("error.log", shutdown->second), w.running});
      }
    }
  }
  std::sort(notes.begin(), notes.end(), [](const auto& a, const auto& b) { return a.t < b.t; });
  return notes;
}

}  // namespace zerodrop::lab
