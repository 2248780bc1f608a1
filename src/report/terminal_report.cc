// The terminal rendering: summary, per pod and phase, holes with evidence and fixes, timeline.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <ostream>
#include <sstream>

#include <fmt/format.h>

#include "base/subprocess.h"
#include "base/text.h"
#include "report/report.h"
#include "report/timeline.h"

namespace zerodrop::report {
namespace {

using diagnose::Diagnosis;
using record::Hole;

// Display columns of UTF-8 text without escape sequences: one per code point.
size_t columns(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) {
    n += (c & 0xC0) != 0x80 ? 1 : 0;
  }
  return n;
}

// ANSI colour only when asked for; every helper returns plain text otherwise.
struct Style {
  bool colour = false;
  int width = 100;

  std::string paint(const std::string& text, std::string_view code) const {
    return colour ? fmt::format("\x1b[{}m{}\x1b[0m", code, text) : text;
  }

  std::string bold(const std::string& text) const { return paint(text, "1"); }

  std::string dim(const std::string& text) const { return paint(text, "2"); }
};

// A unit that must stay on the line of its number ("6.02 s", "30 s;").
bool is_unit(const std::string& word, const std::string& previous) {
  return !previous.empty() && std::isdigit(static_cast<unsigned char>(previous.back()))
         && !word.empty() && word[0] == 's'
         && (word.size() == 1 || !std::isalpha(static_cast<unsigned char>(word[1])));
}

// Wraps `text` at word boundaries into lines of `width` columns, each starting with `indent`.
std::string wrap(const std::string& text, const std::string& indent, int width) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) {
    if (!words.empty() && is_unit(word, words.back())) {
      words.back() += " " + word;
    } else {
      words.push_back(word);
    }
  }
  std::string line, out;
  size_t limit = static_cast<size_t>(std::max(20, width)) - indent.size();
  for (const std::string& word : words) {
    if (!line.empty() && columns(line) + 1 + columns(word) > limit) {
      out += indent + line + '\n';
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) {
    out += indent + line + '\n';
  }
  return out;
}

std::string hole_name(Hole h, const Style& s) {
  return s.paint(std::string(record::to_string(h)), record::info(h).ansi_colour);
}

void print_header(std::ostream& out, const Diagnosis& d, const Style& s) {
  bool pass = d.verdict == diagnose::Verdict::pass;
  out << s.paint(pass ? "PASS" : "FAIL", pass ? "1;32" : "1;31") << "  ";
  out << wrap(d.conclusion, "", s.width - 6).substr(0);
}

// Latent risks the run showed, also when nothing failed: never holes.
void print_notes(std::ostream& out, const Diagnosis& d, const Style& s) {
  if (d.notes.empty()) {
    return;
  }
  out << '\n' << s.bold("Notes") << '\n';
  for (const std::string& note : d.notes) {
    out << wrap("- " + note, "  ", s.width - 4);
  }
}

void print_load(std::ostream& out, const Diagnosis& d, const Style& s) {
  const diagnose::Totals& t = d.totals;
  out << '\n' << s.bold("Load") << '\n';
  out << fmt::format("  requests {}  ok {}  failed {}", t.requests, t.ok, t.failed);
  if (t.latency_recorded) {
    out << fmt::format("  latency p50 {:.1f} ms  p90 {:.1f} ms  p99 {:.1f} ms  max {:.1f} ms",
                       t.p50_ms, t.p90_ms, t.p99_ms, t.max_ms);
  }
  out << '\n';
  if (!d.failures.empty()) {  // single request records (the simulator's buckets carry none)
    std::string after =
        t.client_retry
            ? fmt::format("failed after client retries {} ({} retry-safe failures resent)",
                          t.failed_after_retries(), t.resent)
            : fmt::format(
                "retry-safe {}: a client that resends those once would have seen {} "
                "failed if each resend succeeded",
                t.retry_safe, t.failed_after_retries());
    out << wrap(after, "  ", s.width);
  }
  if (!t.by_class.empty()) {
    std::string classes;
    for (const auto& [name, n] : t.by_class) {
      classes += fmt::format("{}{} {}", classes.empty() ? "" : ", ", name, n);
    }
    out << wrap("failures by class: " + classes, "  ", s.width);
  }
  if (d.disruption) {
    out << fmt::format("  longest disruption (consecutive failures): {} s, from {} s to {} s\n",
                       seconds(d.disruption->end - d.disruption->start),
                       seconds(d.disruption->start), seconds(d.disruption->end));
  }
}

std::string cell(uint64_t failed, uint64_t requests) {
  return requests == 0 ? std::string("-") : fmt::format("{}/{}", failed, requests);
}

// "pod-4", or "pod-4 (B)" in a run that rolled version A to B; at most 18 columns.
std::string pod_label(const Diagnosis& d, const std::string& pod) {
  auto life = std::find_if(d.pods.begin(), d.pods.end(),
                           [&](const diagnose::PodLife& p) { return p.name == pod; });
  if (life == d.pods.end() || life->version.empty()) {
    return pod.substr(0, 18);
  }
  std::string suffix = fmt::format(" ({})", life->version);
  return pod.substr(0, 18 - std::min<size_t>(18, suffix.size())) + suffix;
}

void print_pods(std::ostream& out, const Diagnosis& d, const Style& s) {
  bool any = std::any_of(d.traffic.begin(), d.traffic.end(), [](const auto& t) {
    return t.requests[0] + t.requests[1] + t.requests[2] + t.requests[3] > 0;
  });
  if (!any) {
    return;
  }
  out << '\n' << s.bold("Per pod, failed/requests by phase of its life") << '\n';
  std::string signal = diagnose::stop_signal_name(d);
  out << fmt::format("  {:<18} {:>9} {:>14} {:>15} {:>15} {:>19}\n", "pod", "failed", "serving",
                     "before " + signal, "after " + signal, "after router update");
  for (const diagnose::PodTraffic& t : d.traffic) {
    uint64_t requests = t.requests[0] + t.requests[1] + t.requests[2] + t.requests[3];
    uint64_t failed = t.failed[0] + t.failed[1] + t.failed[2] + t.failed[3];
    out << fmt::format("  {:<18} {:>9} {:>14} {:>15} {:>15} {:>19}\n", pod_label(d, t.pod),
                       cell(failed, requests), cell(t.failed[0], t.requests[0]),
                       cell(t.failed[1], t.requests[1]), cell(t.failed[2], t.requests[2]),
                       cell(t.failed[3], t.requests[3]));
  }
}

void print_propagation(std::ostream& out, const Diagnosis& d, const Style& s) {
  const diagnose::Propagation& p = d.propagation;
  if (p.samples.empty()) {
    return;
  }
  auto longest =
      std::max_element(p.samples.begin(), p.samples.end(),
                       [](const auto& a, const auto& b) { return a.delay() < b.delay(); });
  out << '\n' << s.bold("Propagation") << '\n';
  out << wrap(
      fmt::format("{} router updates of terminations; median {} s, longest {} s after the "
                  "deletion (router {}, pod {})",
                  p.samples.size(), seconds(p.p50), seconds(p.max), longest->router, longest->pod),
      "  ", s.width);
}

// What each termination put to the test: the stop window, traffic at the signal and in it, the
// new connections routed to the pod after its signal and the chance that none arrive.
void print_coverage(std::ostream& out, const Diagnosis& d, const Style& s) {
  const diagnose::Coverage& c = d.coverage;
  if (c.pods.empty()) {
    return;
  }
  out << '\n' << s.bold("What the terminations covered") << '\n';
  out << fmt::format("  {:<18} {:>9} {:>9} {:>13} {:>10} {:>9} {:>10} {:>9}\n", "pod", "stop ms",
                     "in flight", "in stop (new)", "routed s", "new conns", "new/s", "P(none)");
  for (const diagnose::PodCoverage& p : c.pods) {
    out << fmt::format("  {:<18} {:>9.1f} {:>9} {:>13} {:>10.3f} {:>9} {:>10.1f} {:>9.2g}\n",
                       p.pod.substr(0, 18),
                       std::chrono::duration<double, std::milli>(p.stop_window()).count(),
                       p.in_flight_at_signal, fmt::format("{} ({})", p.stop_requests, p.stop_fresh),
                       std::chrono::duration<double>(p.race_window()).count(), p.race_fresh,
                       p.fresh_rate, p.race_miss());
  }
  out << s.dim(
      wrap("stop: signal → exit; routed: how long routers still sent it new connections "
           "after its signal; new/s: new connections it got while serving; P(none) = "
           "exp(−new/s × routed)",
           "  ", s.width));
}

// The pods the stop signal did not stop: SIGKILLed at the end of the grace period.
void print_grace_kills(std::ostream& out, const Diagnosis& d, const Style& s) {
  if (d.grace_kills.empty()) {
    return;
  }
  out << '\n' << s.bold("Killed at the end of the grace period") << '\n';
  for (const diagnose::GraceKill& k : d.grace_kills) {
    std::string signal = signal_full_name(k.stop_signal);
    std::string what =
        k.ignored.empty()
            ? fmt::format("{} at {} s did not stop it in time", signal, seconds(k.signal))
            : fmt::format("{} at {} s did nothing ({})", signal, seconds(k.signal), k.ignored);
    out << wrap(fmt::format("pod {}: {}; it answered {} request{} sent after it; SIGKILL at {} s "
                            "cut {} request{} in flight (grace-overrun); it took {} s from its "
                            "deletion to its exit",
                            k.pod, what, k.served_after, k.served_after == 1 ? "" : "s",
                            seconds(k.kill), k.cut, k.cut == 1 ? "" : "s", seconds(k.waited)),
                "  ", s.width);
  }
}

// `same_as` names an earlier hole whose fix had the same manifest change (printed once).
void print_fix(std::ostream& out, const diagnose::Fix& fix, const Style& s,
               const std::string& same_as) {
  out << wrap("fix: " + fix.summary, "    ", s.width);
  if (!same_as.empty()) {
    out << wrap(
        fmt::format("(the manifest change and its arithmetic are those of {} above)", same_as),
        "      ", s.width);
  } else if (!fix.why.empty()) {
    out << s.dim(wrap("why: " + fix.why, "      ", s.width));
  }
  const std::string snippet = same_as.empty() ? fix.snippet : std::string();
  for (std::string_view line : split(snippet, '\n')) {
    if (!line.empty()) {
      out << "      | " << line << '\n';
    }
  }
  if (!fix.warning.empty() && same_as.empty()) {
    out << wrap("warning: " + fix.warning, "      ", s.width);
  }
  if (!fix.steps.empty()) {
    out << "      app changes, in this order:\n";
    for (size_t i = 0; i < fix.steps.size(); ++i) {
      std::string text = wrap(fix.steps[i], "         ", s.width);
      out << fmt::format("      {}.", i + 1) << text.substr(8);
    }
  }
}

void print_holes(std::ostream& out, const Diagnosis& d, const Style& s) {
  if (d.holes.empty()) {
    return;
  }
  out << '\n' << s.bold("Holes") << '\n';
  std::map<std::string, std::string> printed;  // snippet -> the hole that printed it
  for (const diagnose::HoleSummary& h : d.holes) {
    std::string where = h.pods.empty() ? "" : fmt::format(" · pods {}", fmt::join(h.pods, ", "));
    where += h.routers.empty() ? "" : fmt::format(" · routers {}", fmt::join(h.routers, ", "));
    std::string head =
        wrap(fmt::format("{} · {} request{} · {}–{} s{}", record::to_string(h.hole), h.requests,
                         h.requests == 1 ? "" : "s", seconds(h.first), seconds(h.last), where),
             "  ", s.width);
    size_t name = head.find(record::to_string(h.hole));
    out << head.substr(0, name) << hole_name(h.hole, s)
        << head.substr(name + record::to_string(h.hole).size());
    out << wrap(h.evidence, "    ", s.width);
    auto [it, fresh] = printed.try_emplace(h.fix.snippet, record::to_string(h.hole));
    print_fix(out, h.fix, s, fresh || h.fix.snippet.empty() ? std::string() : it->second);
  }
}

constexpr int kBar = 30;  // columns of the timeline's bar at the busiest bucket

// One bucket's bar: '=' for ok requests, then a hole's letter per share of its failures (at
// least one, so a single failure shows). Returns the text and the columns it takes.
std::pair<std::string, int> timeline_bar(const Bucket& b, uint64_t most, const Style& s) {
  int used = static_cast<int>((b.requests - b.failed) * kBar / most);
  std::string bar = s.paint(std::string(static_cast<size_t>(used), '='), "32");
  for (size_t h = 0; h < record::kHoleCount; ++h) {
    if (b.by_hole[h] == 0) {
      continue;
    }
    int cols = std::max<int>(1, static_cast<int>(b.by_hole[h] * kBar / most));
    cols = std::max(0, std::min(cols, kBar + 2 - used));
    bar += s.paint(std::string(static_cast<size_t>(cols), record::kHoles[h].letter),
                   record::kHoles[h].ansi_colour);
    used += cols;
  }
  return {bar, used};
}

// Packs the marks of one bucket into lines of at most `room` columns.
std::vector<std::string> event_lines(const std::vector<std::string>& texts, size_t room) {
  std::vector<std::string> lines;
  std::string line;
  for (const std::string& text : texts) {
    if (!line.empty() && columns(line) + 2 + columns(text) > room) {
      lines.push_back(line + ",");
      line.clear();
    }
    line += (line.empty() ? "" : ", ") + text;
  }
  if (!line.empty()) {
    lines.push_back(line);
  }
  return lines;
}

void print_timeline_head(std::ostream& out, Micros width, const Style& s) {
  out << '\n'
      << s.bold(fmt::format("Timeline: one row per {} s by send time; '=' ok, letters: failures "
                            "by hole",
                            seconds(width)))
      << '\n';
  std::string legend;
  for (size_t h = 0; h < record::kHoleCount; ++h) {
    legend += fmt::format("{}{}={}", legend.empty() ? "" : " ", record::kHoles[h].letter,
                          record::to_string(static_cast<Hole>(h)));
  }
  out << s.dim(wrap(legend, "  ", s.width));
  out << fmt::format("  {:>7} {:>6} {:>5}  {:<{}}  {}\n", "t (s)", "reqs", "fail", "", kBar,
                     "pod events, router updates");
}

// The timeline: one row per bucket, its bar, and the pod events and router updates in it.
void print_timeline(std::ostream& out, const record::RunRecord& run, const Diagnosis& d,
                    const Style& s) {
  Micros width = std::max<Micros>(std::chrono::seconds(1), nice_width(run_end(run), 120));
  std::vector<Bucket> buckets = bucketize(run, d, width);
  std::vector<Mark> all = marks(run, d);
  uint64_t most = 1;
  for (const Bucket& b : buckets) {
    most = std::max(most, b.requests);
  }
  print_timeline_head(out, width, s);
  constexpr int kLeft = 2 + 7 + 1 + 6 + 1 + 5 + 2 + kBar + 2 + 2;
  size_t room = static_cast<size_t>(std::max(20, s.width - kLeft));
  size_t next = 0;
  for (const Bucket& b : buckets) {
    auto [bar, used] = timeline_bar(b, most, s);
    std::vector<std::string> texts;
    for (; next < all.size() && all[next].t < b.start + b.width; ++next) {
      texts.push_back(all[next].text);
    }
    std::vector<std::string> lines = event_lines(texts, room);
    out << fmt::format("  {:>7} {:>6} {:>5}  ", seconds(b.start), b.requests, b.failed) << bar
        << std::string(static_cast<size_t>(std::max(0, kBar + 2 - used)), ' ')
        << (lines.empty() ? "" : lines[0]) << '\n';
    for (size_t i = 1; i < lines.size(); ++i) {
      out << std::string(static_cast<size_t>(kLeft - 2), ' ') << lines[i] << '\n';
    }
  }
}

}  // namespace

void print_terminal(std::ostream& out, const record::RunRecord& run, const Diagnosis& d,
                    const TerminalOptions& options, bool tty) {
  Style style{options.colour == Colour::always || (options.colour == Colour::automatic && tty),
              std::max(60, options.width)};
  print_header(out, d, style);
  print_load(out, d, style);
  print_pods(out, d, style);
  print_propagation(out, d, style);
  print_grace_kills(out, d, style);
  print_coverage(out, d, style);
  print_holes(out, d, style);
  print_notes(out, d, style);
  print_timeline(out, run, d, style);
}

bool is_terminal(std::FILE* stream) {
  return ::isatty(::fileno(stream)) == 1;
}

}  // namespace zerodrop::report
