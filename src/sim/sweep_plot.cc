#include "sim/sweep_plot.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "record/hole.h"

namespace zerodrop::sim {
namespace {

double largest_mean(const SweepResult& result) {
  double most = 0;
  for (const SweepRow& row : result.rows) {
    most = std::max(most, row.mean_failures);
  }
  return most;
}

bool recommended(const SweepResult& result, const SweepRow& row) {
  return result.recommended && *result.recommended == row.value;
}

// A round step for an axis from 0 to `top` with about five ticks (1, 2 or 5 times a power of 10).
double tick_step(double top) {
  double raw = std::max(top, 1.0) / 5;
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * power >= raw) {
      return m * power;
    }
  }
  return 10 * power;
}

std::string escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  }
  return out;
}

constexpr double kWidth = 640, kHeight = 300;
constexpr double kLeft = 56, kRight = 16, kTop = 36, kBottom = 64;

// The bars: each value's mean failures per rollout, one rect per hole, bottom up.
void bars(std::string& svg, const SweepResult& result, int runs, double top) {
  double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  double slot = plot_w / static_cast<double>(std::max<size_t>(1, result.rows.size()));
  double bar = std::max(1.0, slot * 0.7);
  for (size_t i = 0; i < result.rows.size(); ++i) {
    const SweepRow& row = result.rows[i];
    double x = kLeft + slot * static_cast<double>(i) + (slot - bar) / 2;
    double y = kTop + plot_h;
    for (size_t h = 0; h < row.failures_by_hole_total.size(); ++h) {
      double mean = static_cast<double>(row.failures_by_hole_total[h]) / runs;
      if (mean <= 0) {
        continue;
      }
      double height = plot_h * mean / top;
      y -= height;
      const record::HoleInfo& info = record::info(static_cast<record::Hole>(h));
      svg += fmt::format(
          R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"><title>{}: )"
          R"({:.1f} per rollout</title></rect>)"
          "\n",
          x, y, bar, height, info.html_colour, info.id, mean);
    }
    if (recommended(result, row)) {
      svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" class="rec">recommended</text>)"
                         "\n",
                         x + bar / 2, y - 6);
    }
  }
}

}  // namespace

std::string sweep_value_text(SweepParameter parameter, double value) {
  return parameter == SweepParameter::max_unavailable ? fmt::format("{:g}", value)
                                                      : fmt::format("{:g}s", value);
}

std::string sweep_text_plot(const SweepResult& result, SweepParameter parameter, int runs,
                            int width) {
  double most = largest_mean(result);
  std::string out =
      fmt::format("mean failures per rollout ({} seeds) against {}:\n", runs, to_string(parameter));
  for (const SweepRow& row : result.rows) {
    int length = most > 0 ? static_cast<int>(std::lround(width * row.mean_failures / most)) : 0;
    if (length == 0 && row.mean_failures > 0) {
      length = 1;  // some failures: never an empty bar
    }
    out += fmt::format("{:>10} |{:<{}}| {:.1f}{}\n", sweep_value_text(parameter, row.value),
                       std::string(static_cast<size_t>(length), '#'), width, row.mean_failures,
                       recommended(result, row) ? "  <- recommended" : "");
  }
  return out;
}

std::string sweep_svg(const SweepResult& result, SweepParameter parameter, int runs) {
  double step = tick_step(largest_mean(result));
  double top = step * std::max(1.0, std::ceil(largest_mean(result) / step));
  double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  std::string svg = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" width="{}" height="{}">)"
      "\n<style>text{{font:11px system-ui,sans-serif;fill:#333}}.axis{{stroke:#eee}}"
      ".y{{text-anchor:end;fill:#777}}.x{{text-anchor:middle;fill:#777}}"
      ".rec{{text-anchor:middle;fill:#222}}.title{{font-size:14px;fill:#222}}</style>\n"
      R"(<text x="{}" y="20" class="title">Failures per rollout against {} (mean of {} seeds))"
      "</text>\n",
      kWidth, kHeight, kWidth, kHeight, kLeft, escape(to_string(parameter)), runs);
  for (double v = 0; v <= top + step / 2; v += step) {
    double y = kTop + plot_h - plot_h * v / top;
    svg += fmt::format(R"(<line x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}" class="axis"/>)"
                       R"(<text x="{}" y="{:.1f}" class="y">{:g}</text>)"
                       "\n",
                       kLeft, kLeft + plot_w, y, y, kLeft - 6, y + 4, v);
  }
  bars(svg, result, runs, top);
  double slot = plot_w / static_cast<double>(std::max<size_t>(1, result.rows.size()));
  size_t every = std::max<size_t>(1, result.rows.size() / 15);  // at most ~15 labels
  for (size_t i = 0; i < result.rows.size(); i += every) {
    svg += fmt::format(R"(<text x="{:.1f}" y="{}" class="x">{}</text>)"
                       "\n",
                       kLeft + slot * (static_cast<double>(i) + 0.5), kTop + plot_h + 16,
                       escape(sweep_value_text(parameter, result.rows[i].value)));
  }
  // Legend: the holes that failed somewhere in the sweep.
  double x = kLeft;
  for (size_t h = 0; h < record::kHoleCount; ++h) {
    bool any = std::any_of(result.rows.begin(), result.rows.end(), [h](const SweepRow& row) {
      return h < row.failures_by_hole_total.size() && row.failures_by_hole_total[h] > 0;
    });
    if (!any) {
      continue;
    }
    const record::HoleInfo& info = record::info(static_cast<record::Hole>(h));
    svg += fmt::format(R"(<rect x="{:.1f}" y="{}" width="10" height="10" fill="{}"/>)"
                       R"(<text x="{:.1f}" y="{}">{}</text>)"
                       "\n",
                       x, kHeight - 22, info.html_colour, x + 14, kHeight - 13, info.id);
    x += 14 + 7.0 * static_cast<double>(info.id.size()) + 18;
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace zerodrop::sim
