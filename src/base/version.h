#pragma once

#include <string_view>

namespace zerodrop::base {

// The project's version as CMake's project() declares it: one place for --version, SARIF and the
// man page, so a release bump cannot leave one of them behind.
std::string_view version();

}  // namespace zerodrop::base
