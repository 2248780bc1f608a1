// A real ingress's faults named from its own log lines (the lab's router-log notes).
#include "diagnose/ingress_rules.h"

#include <chrono>

#include <fmt/format.h>

#include "diagnose/router_rules.h"
#include "http/router_log.h"

namespace zerodrop::diagnose {
namespace {

using record::Event;
using record::Outcome;
using record::RequestRecord;

constexpr Micros kClockSlack = http::kLogClockSlack;
constexpr Micros kHaproxyMatch = http::kHaproxyLineMatch;

// The line a router-log note quotes from `file`; nullopt for another file or another note.
std::optional<std::string_view> logged_line(const Event& e, std::string_view file) {
  std::string prefix = fmt::format("{} {}: ", record::kRouterLog, file);
  if (!e.detail.starts_with(prefix)) {
    return std::nullopt;
  }
  return std::string_view(e.detail).substr(prefix.size());
}

// HAProxy's line for `r`: the same client port and status, ending nearest the request's end.
std::optional<std::pair<http::HaproxyLogLine, std::string_view>> haproxy_line(
    const RequestRecord& r, const Facts& facts) {
  std::optional<std::pair<http::HaproxyLogLine, std::string_view>> best;
  Micros best_gap{0};
  for (const Event* e : facts.router_log(r.router)) {
    auto text = logged_line(*e, "haproxy.log");
    auto line = text ? http::parse_haproxy_log_line(*text) : std::nullopt;
    Micros gap = std::chrono::abs(e->t - r.done);
    if (line && line->client_port == r.local_port && line->status == r.status
        && gap <= kHaproxyMatch && (!best || gap < best_gap)) {
      best = {*line, *text};
      best_gap = gap;
    }
  }
  return best;
}

// The kept-alive connection's last request before `r` (access.log), as nginx logged it.
std::optional<std::pair<http::NginxAccessLine, const Event*>> last_served(const RequestRecord& r,
                                                                          const Facts& facts) {
  std::optional<std::pair<http::NginxAccessLine, const Event*>> last;
  Micros sent = send_time(r);
  for (const Event* e : facts.router_log(r.router)) {
    auto text = logged_line(*e, "access.log");
    auto line = text ? http::parse_nginx_access_line(*text) : std::nullopt;
    if (line && line->client_port == r.local_port && e->t <= sent + kClockSlack
        && sent - e->t < http::kNginxKeepaliveTimeout && (!last || e->t >= last->second->t)) {
      last = {*line, e};
    }
  }
  return last;
}

// The reload that retired worker `pid` within [from, to]: its "gracefully shutting down" line,
// whose shutdown ended no earlier than `from` and began no later than `to`.
const Event* retired(const RequestRecord& r, const Facts& facts, int pid, Micros from, Micros to) {
  for (const Event* e : facts.router_log(r.router)) {
    auto text = logged_line(*e, "error.log");
    auto line = text ? http::parse_nginx_error_line(*text) : std::nullopt;
    if (line && line->pid == pid && line->message == http::kNginxShuttingDown && e->t >= from
        && e->t_min.value_or(e->t) <= to) {
      return e;
    }
  }
  return nullptr;
}

}  // namespace

LogRead read_router_log(const RequestRecord& r, const Facts& facts) {
  LogRead read{r, {}};
  if (r.router_error.empty() || r.router.empty() || r.local_port == 0) {
    return read;
  }
  auto found = haproxy_line(r, facts);
  if (!found) {
    return read;
  }
  http::TerminationMeaning meaning = http::meaning_of(found->first);
  std::string said = r.router_error;
  // A state of HAProxy's own names no ProxyFailure: the word says it is HAProxy's, which no rule
  // blames on the app (router_fault: the router failed).
  read.request.router_error = meaning.failure ? std::string(http::to_string(*meaning.failure))
                                              : fmt::format("haproxy_{}", found->first.termination);
  std::string changed =
      read.request.router_error == said ? "" : fmt::format(", not {} as its header said", said);
  read.quote = fmt::format("; its log's termination state {} ({}{}): haproxy.log «{}»",
                           found->first.termination, meaning.words, changed, found->second);
  return read;
}

std::optional<RequestDiagnosis> reload_reset(const RequestRecord& r, const Facts& facts) {
  bool cut =
      r.outcome == Outcome::closed_before_response || r.outcome == Outcome::reset_before_response;
  if (!cut || r.connection != record::Connection::reused || !r.backend.empty()
      || !r.router_error.empty() || r.router.empty() || r.local_port == 0) {
    return std::nullopt;
  }
  auto served = last_served(r, facts);
  Micros sent = send_time(r);
  const Event* reload = served ? retired(r, facts, served->first.pid,
                                         served->second->t - kClockSlack, sent + kClockSlack)
                               : nullptr;
  if (reload == nullptr) {
    return std::nullopt;
  }
  // The shutdown's stamp is the poll that saw it: often a few ms after the request was sent.
  Micros gap = sent - reload->t;
  std::string when =
      fmt::format("{} {} this request was sent", duration_text(std::chrono::abs(gap)),
                  gap >= Micros{0} ? "before" : "after");
  if (reload->t_min) {
    when += fmt::format(" (running at its poll before, {})", seconds_text(*reload->t_min));
  }
  return RequestDiagnosis{
      0, record::Hole::ingress_reload_reset, BackendState::unknown, false,
      fmt::format(
          "{} on a kept-alive client connection (port {}) of {}: nginx worker {} had served its "
          "last request there, ended at {} (access.log «{}»); a reload retired that worker, which "
          "the lab saw shut down at {}, {} (error.log «{}»): it closes its idle connections, and "
          "the request met the closed connection before any response; nginx's failure, not the "
          "app's, and safe to resend",
          record::to_string(r.outcome), r.local_port, router_name(r), served->first.pid,
          seconds_text(served->second->t), *logged_line(*served->second, "access.log"),
          seconds_text(reload->t), when, *logged_line(*reload, "error.log"))};
}

}  // namespace zerodrop::diagnose
