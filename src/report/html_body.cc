// report.html's text: verdict, load, the chart, holes with evidence and fixes, pods, one script.
#include <ostream>

#include <fmt/format.h>

#include "report/html_parts.h"
#include "report/timeline.h"

namespace zerodrop::report {
namespace {

using diagnose::Diagnosis;

void load_section(std::ostream& out, const Diagnosis& d) {
  const diagnose::Totals& t = d.totals;
  out << "<section id=\"load\"><h2>Load</h2><table><tr><th>requests</th><th>ok</th>"
      << "<th>failed</th><th>retry-safe</th><th>failed after client retries</th>"
      << "<th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>max ms</th></tr>";
  auto ms = [&](double v) {
    return t.latency_recorded ? fmt::format("{:.1f}", v) : std::string("–");
  };
  out << fmt::format(
      "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td>"
      "<td>{}</td><td>{}</td></tr></table>",
      t.requests, t.ok, t.failed, t.retry_safe, t.failed_after_retries(),
      t.client_retry ? " (resent)" : " (if each resend succeeded)", ms(t.p50_ms), ms(t.p90_ms),
      ms(t.p99_ms), ms(t.max_ms));
  if (!t.latency_recorded && t.requests > 0) {
    out << "<p>Latency: not recorded per request (some requests came only as counts).</p>";
  }
  if (!t.by_class.empty()) {
    out << "<p>Failures by class: ";
    for (size_t i = 0; i < t.by_class.size(); ++i) {
      out << (i ? ", " : "") << escape(t.by_class[i].first) << ' ' << t.by_class[i].second;
    }
    out << "</p>";
  }
  out << "</section>\n";
}

void fix_html(std::ostream& out, const diagnose::Fix& fix) {
  out << "<p><b>Fix:</b> " << escape(fix.summary) << "</p>";
  if (!fix.why.empty()) {
    out << "<p><small>" << escape(fix.why) << "</small></p>";
  }
  if (!fix.snippet.empty()) {
    out << "<pre>" << escape(fix.snippet) << "</pre>";
  }
  if (!fix.warning.empty()) {
    out << "<p class=\"warning\">" << escape(fix.warning) << "</p>";
  }
  if (!fix.steps.empty()) {
    out << "<p>App changes, in this order:</p><ol>";
    for (const std::string& step : fix.steps) {
      out << "<li>" << escape(step) << "</li>";
    }
    out << "</ol>";
  }
}

void holes_section(std::ostream& out, const Diagnosis& d) {
  out << "<section id=\"holes\"><h2>Holes</h2>";
  if (d.holes.empty()) {
    out << "<p>No request failed: no hole to name.</p>";
  }
  for (const diagnose::HoleSummary& h : d.holes) {
    std::string id(record::to_string(h.hole));
    out << fmt::format(R"(<div class="hole" data-hole="{}" style="border-color:{}">)", id,
                       hole_colour(h.hole));
    out << fmt::format("<h3>{}: {} requests, {}–{} s</h3>", id, h.requests, seconds(h.first),
                       seconds(h.last));
    if (!h.pods.empty() || !h.routers.empty()) {
      out << fmt::format("<p>pods {} · routers {}</p>",
                         escape(fmt::format("{}", fmt::join(h.pods, ", "))),
                         escape(fmt::format("{}", fmt::join(h.routers, ", "))));
    }
    out << "<p>" << escape(h.evidence) << "</p>";
    fix_html(out, h.fix);
    out << "</div>";
  }
  out << "</section>\n";
}

void pods_section(std::ostream& out, const Diagnosis& d) {
  out << "<section id=\"pods\"><h2>Per pod, failed/requests by phase of its life</h2><table>"
      << fmt::format("<tr><th>pod</th><th>serving</th><th>before {0}</th><th>after {0}</th>",
                     diagnose::stop_signal_name(d))
      << "<th>after router update</th></tr>";
  for (const diagnose::PodTraffic& t : d.traffic) {
    out << "<tr><td>" << escape(t.pod) << "</td>";
    for (size_t i = 0; i < diagnose::kPhaseCount; ++i) {
      out << fmt::format("<td>{}/{}</td>", t.failed[i], t.requests[i]);
    }
    out << "</tr>";
  }
  out << "</table></section>\n";
}

void coverage_section(std::ostream& out, const Diagnosis& d) {
  const diagnose::Coverage& c = d.coverage;
  if (c.pods.empty()) {
    return;
  }
  out << "<section id=\"coverage\"><h2>What the terminations covered</h2><p>" << escape(c.summary)
      << "</p><table><tr><th>pod</th><th>stop window ms</th>"
      << "<th>in flight at signal</th><th>sent in stop window (new connections)</th>"
      << "<th>routed after signal s</th><th>new connections then</th>"
      << "<th>new connections/s while serving</th><th>P(none in window)</th></tr>";
  for (const diagnose::PodCoverage& p : c.pods) {
    out << fmt::format(
        "<tr><td>{}</td><td>{:.1f}</td><td>{}</td><td>{} ({})</td><td>{:.3f}</td><td>{}</td>"
        "<td>{:.1f}</td><td>{:.2g}</td></tr>",
        escape(p.pod), std::chrono::duration<double, std::milli>(p.stop_window()).count(),
        p.in_flight_at_signal, p.stop_requests, p.stop_fresh,
        std::chrono::duration<double>(p.race_window()).count(), p.race_fresh, p.fresh_rate,
        p.race_miss());
  }
  out << "</table></section>\n";
}

// The page's only script: marks the page as rendered (the e2e test reads the marker) and
// highlights a hole's failures in the chart while the pointer is over its section.
constexpr const char* kScript = R"(<script>
(function () {
  var svg = document.getElementById('clocks');
  var bars = svg.querySelectorAll('.pod-bar');
  document.querySelectorAll('.hole').forEach(function (div) {
    var rects = svg.querySelectorAll('.hole-' + div.dataset.hole);
    div.addEventListener('mouseenter', function () {
      svg.classList.add('focus');
      rects.forEach(function (r) { r.classList.add('on'); });
    });
    div.addEventListener('mouseleave', function () {
      svg.classList.remove('focus');
      rects.forEach(function (r) { r.classList.remove('on'); });
    });
  });
  document.getElementById('status').textContent = 'rendered: ' + bars.length + ' pod bars';
  document.body.setAttribute('data-rendered', 'ok');
})();
</script>
)";

}  // namespace

void write_html_body(std::ostream& out, const record::RunRecord& run, const Diagnosis& d) {
  bool pass = d.verdict == diagnose::Verdict::pass;
  out << "<body data-rendered=\"no\">\n<header><h1>zerodrop "
      << escape(run.engine.empty() ? "run" : run.engine)
      << fmt::format(R"( <span class="verdict {}">{}</span></h1>)", pass ? "pass" : "fail",
                     pass ? "PASS" : "FAIL")
      << "<p>" << escape(d.conclusion) << "</p>";
  for (const std::string& note : d.notes) {
    out << "<p class=\"note\">Note: " << escape(note) << "</p>";
  }
  out << "</header>\n";
  load_section(out, d);
  out << "<section id=\"chart\"><h2>The two clocks</h2><p>Each pod's life (kubelet: preStop, "
      << "stop signal, SIGKILL), each router's update of each termination, and the requests "
      << "sent per time bucket with failures stacked by hole. Hover for details.</p>";
  write_chart(out, run, d);
  out << "</section>\n";
  holes_section(out, d);
  coverage_section(out, d);
  pods_section(out, d);
  out << "<p id=\"status\">rendering…</p>\n" << kScript << "</body></html>\n";
}

}  // namespace zerodrop::report
