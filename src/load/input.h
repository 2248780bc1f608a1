#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "load/load.h"

namespace zerodrop::load {

// Parsers for what users type into `zerodrop load` (and what the lab passes through). Each throws
// Error naming the flag or file and the offending text.

// "200-399,404" -> {{200,399},{404,404}}.
std::vector<StatusRange> parse_status_ranges(std::string_view text);

// "Name: value" -> {"Name", "value"} (value trimmed).
std::pair<std::string, std::string> parse_header(std::string_view text);

// A targets file: one "METHOD URL" per line; blank lines and lines starting with # are skipped.
std::vector<Target> read_targets(const std::string& path);

// The whole content of a file (for --body-file).
std::string read_file(const std::string& path, std::string_view what);

}  // namespace zerodrop::load
