#pragma once

#include <string>
#include <string_view>

namespace zerodrop::report {

// Text made safe for XML and HTML, content and attribute values alike: the five predefined
// entities (&apos; too, for single-quoted attributes) and control characters other than newline
// and tab as spaces (XML 1.0 forbids them even escaped). report.html and the JUnit file share it.
std::string escape(std::string_view text);

}  // namespace zerodrop::report
