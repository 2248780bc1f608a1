#include "load/input.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "base/error.h"
#include "base/parse.h"
#include "base/text.h"

namespace zerodrop::load {

std::vector<StatusRange> parse_status_ranges(std::string_view text) {
  std::vector<StatusRange> ranges;
  for (std::string_view part : split(text, ',')) {
    std::string_view item = trim(part);
    size_t dash = item.find('-');
    StatusRange r;
    r.first = static_cast<int>(parse_integer(item.substr(0, dash), "--ok-status", 100, 599));
    r.last = dash == std::string_view::npos
                 ? r.first
                 : static_cast<int>(parse_integer(item.substr(dash + 1), "--ok-status", 100, 599));
    if (r.last < r.first) {
      throw Error(fmt::format("--ok-status: range '{}' ends before it starts", item));
    }
    ranges.push_back(r);
  }
  if (ranges.empty()) {
    throw Error("--ok-status: expected statuses like 200-399,404, got ''");
  }
  return ranges;
}

std::pair<std::string, std::string> parse_header(std::string_view text) {
  size_t colon = text.find(':');
  std::string_view name = colon == std::string_view::npos ? "" : trim(text.substr(0, colon));
  if (name.empty()) {
    throw Error(fmt::format("-H: expected 'Name: value', got '{}'", text));
  }
  return {std::string(name), std::string(trim(text.substr(colon + 1)))};
}

std::vector<Target> read_targets(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw Error(fmt::format("--targets: cannot read {}", path));
  }
  std::vector<Target> targets;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    std::string_view text = trim(line);
    if (text.empty() || text.front() == '#') {
      continue;
    }
    size_t space = text.find_first_of(" \t");
    if (space == std::string_view::npos) {
      throw Error(fmt::format("{}:{}: expected 'METHOD URL', got '{}'", path, number, text));
    }
    targets.push_back({std::string(text.substr(0, space)), std::string(trim(text.substr(space)))});
  }
  if (targets.empty()) {
    throw Error(fmt::format("--targets: {} has no 'METHOD URL' line", path));
  }
  return targets;
}

std::string read_file(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(fmt::format("{}: cannot read {}", what, path));
  }
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace zerodrop::load
