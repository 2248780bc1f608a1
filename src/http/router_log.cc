#include "http/router_log.h"

#include <algorithm>
#include <charconv>

namespace zerodrop::http {
namespace {

// The next space-separated field of `rest` (advancing it); empty at the end.
std::string_view next_field(std::string_view& rest) {
  size_t start = rest.find_first_not_of(' ');
  if (start == std::string_view::npos) {
    rest = {};
    return {};
  }
  rest.remove_prefix(start);
  size_t end = rest.find(' ');
  std::string_view field = rest.substr(0, end);
  rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  return field;
}

// A whole field as a decimal integer in [min, max]; nullopt otherwise.
std::optional<int64_t> integer(std::string_view text, int64_t min, int64_t max) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min
      || value > max) {
    return std::nullopt;
  }
  return value;
}

// "1733526000.123" (seconds and exactly three decimals) as microseconds since the epoch.
std::optional<std::chrono::microseconds> unix_millis(std::string_view text) {
  size_t dot = text.find('.');
  if (dot == std::string_view::npos || text.size() - dot != 4) {
    return std::nullopt;
  }
  auto seconds = integer(text.substr(0, dot), 0, 1LL << 40);
  auto millis = integer(text.substr(dot + 1), 0, 999);
  if (!seconds || !millis) {
    return std::nullopt;
  }
  return std::chrono::seconds(*seconds) + std::chrono::milliseconds(*millis);
}

std::optional<uint16_t> port(std::string_view text) {
  auto value = integer(text, 1, 65535);
  return value ? std::optional<uint16_t>(static_cast<uint16_t>(*value)) : std::nullopt;
}

// "key=value" with this key: the value; nullopt otherwise.
std::optional<std::string_view> keyed(std::string_view field, std::string_view key) {
  if (!field.starts_with(key) || field.size() <= key.size() || field[key.size()] != '=') {
    return std::nullopt;
  }
  return field.substr(key.size() + 1);
}

// HAProxy's first character: what ended the session (configuration.txt, 8.5).
std::optional<std::string_view> cause_words(char c) {
  switch (c) {
    case 'C':
      return "the client aborted";
    case 'S':
      return "the server aborted or refused";
    case 'P':
      return "HAProxy aborted it itself (a limit, a deny rule, or a server response it blocked)";
    case 'L':
      return "HAProxy answered it locally, passing it to no server";
    case 'R':
      return "a resource of HAProxy ran out (memory, sockets, source ports)";
    case 'I':
      return "HAProxy found an internal error";
    case 'D':
      return "HAProxy killed it because the server was detected down";
    case 'U':
      return "HAProxy killed it on a backup server because an active one came up";
    case 'K':
      return "an admin killed it on HAProxy";
    case 'c':
      return "the client-side timeout expired";
    case 's':
      return "the server-side timeout expired";
    case '-':
      return "it completed normally";
    default:
      return std::nullopt;
  }
}

// HAProxy's second character: where the session was when it ended.
std::optional<std::string_view> phase_words(char c) {
  switch (c) {
    case 'R':
      return "while waiting for the client's request";
    case 'Q':
      return "while queued for a connection slot";
    case 'C':
      return "while connecting to the server";
    case 'H':
      return "while waiting for complete response headers from the server";
    case 'D':
      return "in the data phase";
    case 'L':
      return "while sending the last data to the client";
    case 'T':
      return "while the request was tarpitted";
    case '-':
      return "after the end of the data transfer";
    default:
      return std::nullopt;
  }
}

// The failure a server-side end names: refused or broken (S), or timed out (s), by phase.
std::optional<ProxyFailure> server_failure(char cause, char phase) {
  bool timeout = cause == 's';
  switch (phase) {
    case 'C':
      return timeout ? ProxyFailure::connect_timeout : ProxyFailure::connect_refused;
    case 'H':
      return timeout ? ProxyFailure::upstream_timeout : ProxyFailure::upstream_reset;
    case 'D':
    case 'L':
      return timeout ? ProxyFailure::upstream_timeout : ProxyFailure::upstream_closed;
    default:
      return std::nullopt;  // queued: no server was asked
  }
}

}  // namespace

std::optional<HaproxyLogLine> parse_haproxy_log_line(std::string_view line) {
  std::string_view rest = line;
  HaproxyLogLine out;
  auto accepted = unix_millis(next_field(rest));
  auto client = port(next_field(rest));
  auto status = integer(next_field(rest), -1, 999);
  std::string_view server = next_field(rest);
  std::string_view termination = next_field(rest);
  auto total = keyed(next_field(rest), "Tt");
  auto total_ms = total ? integer(*total, -1, 1LL << 40) : std::nullopt;
  if (!accepted || !client || !status || server.find('/') == std::string_view::npos
      || !termination_meaning(termination) || !total_ms) {
    return std::nullopt;
  }
  out.accepted = *accepted;
  out.client_port = *client;
  out.status = static_cast<int>(*status);
  out.server = std::string(server);
  out.termination = std::string(termination);
  out.total = std::chrono::milliseconds(std::max<int64_t>(*total_ms, 0));
  return out;
}

std::optional<TerminationMeaning> termination_meaning(std::string_view state) {
  if (state.size() != 2) {
    return std::nullopt;
  }
  auto cause = cause_words(state[0]);
  auto phase = phase_words(state[1]);
  if (!cause || !phase) {
    return std::nullopt;
  }
  TerminationMeaning out;
  out.words = std::string(*cause) + " " + std::string(*phase);
  if (state[0] == 'S' || state[0] == 's') {
    out.failure = server_failure(state[0], state[1]);
  } else if (state == "PH") {
    out.failure = ProxyFailure::bad_response;  // HAProxy blocked the server's response
  }
  return out;
}

TerminationMeaning meaning_of(const HaproxyLogLine& line) {
  std::optional<TerminationMeaning> meaning = termination_meaning(line.termination);
  TerminationMeaning out = meaning ? *meaning : TerminationMeaning{};
  if (line.server.ends_with("/<NOSRV>") && out.failure) {
    out.failure = ProxyFailure::no_endpoint;
    out.words = "HAProxy had no server to send it to";
  }
  return out;
}

std::optional<NginxAccessLine> parse_nginx_access_line(std::string_view line) {
  std::string_view rest = line;
  auto logged = unix_millis(next_field(rest));
  auto client = port(next_field(rest));
  auto pid_text = keyed(next_field(rest), "pid");
  auto pid = pid_text ? integer(*pid_text, 1, 1LL << 31) : std::nullopt;
  // The request line, quoted: nginx writes a quote inside it as \x22, so the next quote ends it.
  size_t open = rest.find_first_not_of(' ');
  if (!logged || !client || !pid || open == std::string_view::npos || rest[open] != '"') {
    return std::nullopt;
  }
  size_t close = rest.find('"', open + 1);
  if (close == std::string_view::npos) {
    return std::nullopt;
  }
  rest.remove_prefix(close + 1);
  auto status = integer(next_field(rest), 0, 999);
  if (!status) {
    return std::nullopt;
  }
  return NginxAccessLine{*logged, *client, static_cast<int>(*pid), static_cast<int>(*status)};
}

std::optional<NginxErrorLine> parse_nginx_error_line(std::string_view line) {
  std::string_view rest = line;
  std::string_view date = next_field(rest);
  std::string_view time = next_field(rest);
  std::string_view level = next_field(rest);
  std::string_view ids = next_field(rest);
  if (date.size() != 10 || date[4] != '/' || time.size() != 8 || time[2] != ':' || level.size() < 3
      || level.front() != '[' || level.back() != ']' || !ids.ends_with(':')) {
    return std::nullopt;
  }
  auto pid = integer(ids.substr(0, ids.find('#')), 1, 1LL << 31);
  size_t start = rest.find_first_not_of(' ');
  if (!pid || ids.find('#') == std::string_view::npos) {
    return std::nullopt;
  }
  NginxErrorLine out;
  out.level = std::string(level.substr(1, level.size() - 2));
  out.pid = static_cast<int>(*pid);
  out.message = start == std::string_view::npos ? "" : std::string(rest.substr(start));
  return out;
}

}  // namespace zerodrop::http
