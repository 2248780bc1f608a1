#pragma once

#include <string>

#include "sim/sweep.h"

namespace zerodrop::sim {

// Failures per rollout against the swept value, as `zerodrop sim --sweep` shows them.

// One line per value: the value, a bar of the mean failures per rollout (scaled to the largest,
// at most `width` characters), the mean, and the recommended value marked.
std::string sweep_text_plot(const SweepResult& result, SweepParameter parameter, int runs,
                            int width = 40);

// The same as an SVG (sweep.svg): a bar per value of the mean failures per rollout, stacked by
// hole in the report's hole colours, the recommended value marked; the report's fonts and greys.
std::string sweep_svg(const SweepResult& result, SweepParameter parameter, int runs);

// "5s" for durations, "2" for maxUnavailable.
std::string sweep_value_text(SweepParameter parameter, double value);

}  // namespace zerodrop::sim
