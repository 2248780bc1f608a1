// report.html: one self-contained page. The SVG draws the two clocks: each pod's lifecycle bar
// (the kubelet's fast clock), each router's apply time of each termination (the slow one), and
// beneath them the requests per time bucket with failures stacked by hole.
#include <algorithm>
#include <csignal>
#include <ostream>

#include <fmt/format.h>

#include "base/subprocess.h"
#include "report/html_parts.h"
#include "report/report.h"
#include "report/timeline.h"

namespace zerodrop::report {
namespace {

using diagnose::Diagnosis;
using diagnose::PodLife;

constexpr double kWidth = 1000, kLeft = 150, kRight = 980, kRow = 22, kChart = 150;

// Maps run time onto the plot's x axis.
struct Scale {
  Micros end{1};

  double x(Micros t) const {
    double f = std::chrono::duration<double>(t) / std::chrono::duration<double>(end);
    return kLeft + std::clamp(f, 0.0, 1.0) * (kRight - kLeft);
  }
};

void segment(std::ostream& out, const Scale& sc, double y, std::optional<Micros> from,
             std::optional<Micros> to, const char* cls, const std::string& title) {
  if (!from || !to || *to < *from) {
    return;
  }
  double x0 = sc.x(*from), w = std::max(2.0, sc.x(*to) - x0);
  out << fmt::format(R"(<rect class="{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="14">)"
                     R"(<title>{} {}–{} s</title></rect>)",
                     cls, x0, y, w, escape(title), seconds(*from), seconds(*to));
}

// The first of the candidate moments that happened.
std::optional<Micros> first_of(std::initializer_list<std::optional<Micros>> moments) {
  for (const auto& m : moments) {
    if (m) {
      return m;
    }
  }
  return std::nullopt;
}

// HTTP/2 connection events of one pod as marks on its bar: a green triangle per GOAWAY a client
// connection received, a red one per connection it closed without GOAWAY.
void connection_marks(std::ostream& out, const Scale& sc, const std::string& pod, double y,
                      const std::vector<record::Event>& events) {
  for (const record::Event& e : events) {
    bool goaway = e.kind == record::EventKind::goaway_received;
    bool blind =
        e.kind == record::EventKind::connection_closed && e.connection && !e.connection->goaway;
    if (e.pod != pod || (!goaway && !blind)) {
      continue;
    }
    out << fmt::format(R"(<path class="{}" fill="{}" d="M{:.1f} {:.1f} l-4 -6 h8 z">)"
                       R"(<title>{} at {} s: {}</title></path>)",
                       goaway ? "goaway" : "closed-no-goaway", goaway ? "#2a6" : "#c33", sc.x(e.t),
                       y, escape(pod), seconds(e.t), escape(e.detail));
  }
}

void pod_bar(std::ostream& out, const Scale& sc, const PodLife& p, double y, Micros end,
             const std::vector<record::Event>& events) {
  out << fmt::format(R"(<g class="pod-bar" data-pod="{}">)", escape(p.name));
  out << fmt::format(R"(<text class="label" x="{}" y="{:.1f}">{}</text>)", kLeft - 8, y + 11,
                     escape(p.name));
  Micros stop = first_of({p.deletion, p.signal, p.kill, p.exited}).value_or(end);
  segment(out, sc, y, p.created, first_of({p.ready, p.exited, end}), "starting",
          p.name + " starting");
  segment(out, sc, y, p.ready, stop, "serving", p.name + " serving");
  segment(out, sc, y, p.deletion, first_of({p.signal, p.kill, p.exited, end}), "prestop",
          p.name + " preStop");
  segment(out, sc, y, p.signal, first_of({p.kill, p.exited, end}), "signalled",
          p.name + " after " + signal_full_name(p.stop_signal.value_or(SIGTERM)));
  if (p.kill) {
    segment(out, sc, y, p.kill, std::max(*p.kill, p.exited.value_or(*p.kill)), "killed",
            p.name + " SIGKILL");
  }
  for (Micros t : p.liveness_restarts) {
    out << fmt::format(R"(<circle class="liveness" cx="{:.1f}" cy="{:.1f}" r="4">)"
                       R"(<title>{} liveness restart at {} s</title></circle>)",
                       sc.x(t), y + 7, escape(p.name), seconds(t));
  }
  connection_marks(out, sc, p.name, y, events);
  out << "</g>\n";
}

void router_row(std::ostream& out, const Scale& sc, const std::string& router,
                const diagnose::Propagation& prop, double y) {
  out << fmt::format(R"(<g class="router-row" data-router="{}">)", escape(router));
  out << fmt::format(R"(<text class="label" x="{}" y="{:.1f}">router {}</text>)", kLeft - 8, y + 11,
                     escape(router));
  out << fmt::format(R"(<line class="track" x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}"/>)", kLeft,
                     kRight, y + 7, y + 7);
  for (const diagnose::PropagationSample& s : prop.samples) {
    if (s.router != router) {
      continue;
    }
    if (s.applied_min) {  // known only to an interval: draw it, not just its upper end
      double from = sc.x(*s.applied_min);
      out << fmt::format(
          R"(<rect class="apply-interval" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="8">)"
          R"(<title>router {} stopped sending new connections to {} between {} s and {} s )"
          R"((inferred from traffic through it)</title></rect>)",
          from, y + 3, std::max(1.0, sc.x(s.applied) - from), escape(router), escape(s.pod),
          seconds(*s.applied_min), seconds(s.applied));
    }
    out << fmt::format(R"(<g class="apply"><rect x="{:.1f}" y="{:.1f}" width="3" height="14"/>)"
                       R"(<text x="{:.1f}" y="{:.1f}">{}</text>)"
                       R"(<title>router {} applied {}'s termination at {} s, {} s after its )"
                       R"(deletion</title></g>)",
                       sc.x(s.applied) - 1.5, y, sc.x(s.applied) + 3, y + 11, escape(s.pod),
                       escape(router), escape(s.pod), seconds(s.applied), seconds(s.delay()));
  }
  out << "</g>\n";
}

void request_chart(std::ostream& out, const Scale& sc, const std::vector<Bucket>& buckets,
                   double top) {
  uint64_t most = 1;
  for (const Bucket& b : buckets) {
    most = std::max(most, b.requests);
  }
  double bottom = top + kChart;
  out << fmt::format(R"(<g class="requests"><text class="label" x="{}" y="{:.1f}">requests</text>)"
                     R"(<text class="label" x="{}" y="{:.1f}">{} per bucket</text>)",
                     kLeft - 8, top + 11, kLeft - 8, top + 25, most);
  for (const Bucket& b : buckets) {
    double x = sc.x(b.start), w = std::max(1.0, sc.x(b.start + b.width) - x - 1);
    double y = bottom;
    auto stack = [&](uint64_t n, const std::string& cls, std::string_view fill,
                     const std::string& t) {
      if (n == 0) {
        return;
      }
      double h = kChart * static_cast<double>(n) / static_cast<double>(most);
      y -= h;
      out << fmt::format(R"(<rect class="{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}")"
                         R"( fill="{}"><title>{} s: {} {}</title></rect>)",
                         cls, x, y, w, h, fill, seconds(b.start), n, t);
    };
    stack(b.requests - b.failed, "ok", "#a5d6a7", "ok");
    for (size_t h = 0; h < record::kHoleCount; ++h) {
      std::string id(record::to_string(static_cast<record::Hole>(h)));
      stack(b.by_hole[h], "fail hole-" + id, record::kHoles[h].html_colour, id);
    }
  }
  out << "</g>\n";
}

void axis(std::ostream& out, const Scale& sc, double top, double bottom) {
  Micros step = nice_width(sc.end, 12);
  out << R"(<g class="axis">)";
  for (Micros t{0}; t <= sc.end; t += step) {
    out << fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1:.1f}" y2="{2:.1f}"/>)"
                       R"(<text x="{0:.1f}" y="{3:.1f}">{4} s</text>)",
                       sc.x(t), top, bottom, bottom + 14, seconds(t));
  }
  out << "</g>\n";
}

// A dashed line from each deleted pod's bar down through the router rows: both clocks start at
// the deletion; the router marks show how far behind the slow one ran.
void deletion_lines(std::ostream& out, const Scale& sc, const std::vector<PodLife>& pods,
                    double rows_end) {
  double y = 10;
  for (const PodLife& p : pods) {
    if (p.deletion) {
      out << fmt::format(R"(<line class="deletion" x1="{0:.1f}" x2="{0:.1f}" y1="{1:.1f}" )"
                         R"(y2="{2:.1f}"><title>{3} deleted at {4} s: both clocks start</title>)"
                         R"(</line>)",
                         sc.x(*p.deletion), y + 14, rows_end, escape(p.name), seconds(*p.deletion));
    }
    y += kRow;
  }
  out << '\n';
}

void chart(std::ostream& out, const record::RunRecord& run, const Diagnosis& d) {
  Scale sc{std::max(Micros{1}, run_end(run))};
  std::vector<std::string> routers;
  for (const diagnose::PropagationSample& s : d.propagation.samples) {
    if (std::find(routers.begin(), routers.end(), s.router) == routers.end()) {
      routers.push_back(s.router);
    }
  }
  std::sort(routers.begin(), routers.end());
  double rows_end = 10 + kRow * static_cast<double>(d.pods.size() + routers.size());
  double height = rows_end + 20 + kChart + 30;
  out << fmt::format(R"(<svg id="clocks" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" )"
                     R"(width="{}" height="{}" role="img" aria-label="pod lifecycles, router )"
                     R"(updates and requests over time">)",
                     kWidth, height, kWidth, height);
  double y = 10;
  for (const PodLife& p : d.pods) {
    pod_bar(out, sc, p, y, sc.end, run.events);
    y += kRow;
  }
  for (const std::string& router : routers) {
    router_row(out, sc, router, d.propagation, y);
    y += kRow;
  }
  deletion_lines(out, sc, d.pods, rows_end);
  double top = rows_end + 20;
  if (d.disruption) {
    // Behind the bars: the longest stretch of consecutive failures the client measured.
    double x0 = sc.x(d.disruption->start);
    out << fmt::format(R"(<rect class="disruption" x="{:.1f}" y="{:.1f}" width="{:.1f}" )"
                       R"(height="{:.1f}"><title>disruption {}–{} s</title></rect>)",
                       x0, top, std::max(2.0, sc.x(d.disruption->end) - x0), kChart,
                       seconds(d.disruption->start), seconds(d.disruption->end));
  }
  request_chart(out, sc, bucketize(run, d, nice_width(sc.end, 100)), top);
  axis(out, sc, 5, top + kChart);
  out << "</svg>\n";
}

}  // namespace

void write_html(std::ostream& out, const record::RunRecord& run, const Diagnosis& d) {
  bool pass = d.verdict == diagnose::Verdict::pass;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      << "<meta name=\"viewport\" content=\"width=device-width\">"
      << "<title>zerodrop report: " << (pass ? "PASS" : "FAIL") << "</title>\n<style>\n"
      << R"(body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1040px;color:#222}
h1{font-size:22px}h2{font-size:17px;margin-top:28px}.verdict{padding:2px 8px;border-radius:4px;color:#fff}
.verdict.pass{background:#2e7d32}.verdict.fail{background:#c62828}table{border-collapse:collapse}
td,th{padding:3px 10px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left}
pre{background:#f5f5f5;padding:8px;border-radius:4px;overflow-x:auto}.hole{border-left:6px solid #999;padding-left:12px;margin:14px 0}
.warning{color:#b71c1c}svg text{font-size:11px;fill:#333}svg .label{text-anchor:end}
.starting{fill:#cfd8dc}.serving{fill:#66bb6a}.prestop{fill:#ffca28}.signalled{fill:#ff7043}
.killed{fill:#b71c1c}.liveness{fill:#000}.track{stroke:#ddd}.apply rect{fill:#3949ab}.apply-interval{fill:#3949ab;opacity:.3}
.disruption{fill:#fde0dc}.axis line{stroke:#eee}.deletion{stroke:#999;stroke-dasharray:3 3}.axis text{text-anchor:middle;fill:#777}svg.focus .fail{opacity:.25}
svg.focus .fail.on{opacity:1}.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
)"
      << "</style></head>\n";
  write_html_body(out, run, d);
}

void write_chart(std::ostream& out, const record::RunRecord& run, const Diagnosis& d) {
  chart(out, run, d);
  out << R"(<p class="legend"><span class="starting" style="background:#cfd8dc"></span>starting)"
      << R"(<span style="background:#66bb6a"></span>serving<span style="background:#ffca28">)"
      << R"(</span>preStop<span style="background:#ff7043"></span>after stop signal)"
      << R"(<span style="background:#b71c1c"></span>killed<span style="background:#3949ab">)"
      << R"(</span>router applies the termination)";
  bool intervals = std::any_of(d.propagation.samples.begin(), d.propagation.samples.end(),
                               [](const auto& s) { return s.applied_min.has_value(); });
  out << (intervals ? R"(<span style="background:#3949ab;opacity:.3"></span>)"
                      R"(… somewhere in this interval (inferred)<br>)"
                    : "<br>");
  out << R"(<span style="background:#a5d6a7"></span>ok)";
  for (size_t h = 0; h < record::kHoleCount; ++h) {
    out << fmt::format(R"(<span style="background:{}"></span>{})", record::kHoles[h].html_colour,
                       record::kHoles[h].id);
  }
  if (d.disruption) {
    out << R"(<span style="background:#fde0dc"></span>longest disruption)";
  }
  out << "</p>\n";
}

std::string_view hole_colour(record::Hole h) {
  return record::info(h).html_colour;
}

}  // namespace zerodrop::report
