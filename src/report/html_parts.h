#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "diagnose/diagnose.h"
#include "record/run_record.h"
#include "report/markup.h"

namespace zerodrop::report {

// Pieces of report.html, internal to report: html_report.cc draws the head and the SVG chart,
// html_body.cc the text sections and the page's one script.

// The SVG of the two clocks and its legend.
void write_chart(std::ostream& out, const record::RunRecord& run,
                 const diagnose::Diagnosis& diagnosis);

// Everything from <body> to </html>, with the chart in its place.
void write_html_body(std::ostream& out, const record::RunRecord& run,
                     const diagnose::Diagnosis& diagnosis);

// The fill colour of a hole in the chart and the page ("#d32f2f").
std::string_view hole_colour(record::Hole hole);

}  // namespace zerodrop::report
