#include "kubeapi/selector.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace zerodrop::kubeapi {

using nlohmann::json;

namespace {

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(' ');
  size_t e = s.find_last_not_of(' ');
  return b == std::string_view::npos ? "" : std::string(s.substr(b, e - b + 1));
}

// Splits on commas outside parentheses ("a in (x,y),b=c").
std::vector<std::string_view> split_requirements(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      if (i > start) {
        out.push_back(text.substr(start, i - start));
      }
      start = i + 1;
    } else if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      --depth;
    }
  }
  return out;
}

std::vector<std::string> set_values(std::string_view text, std::string_view whole) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    throw Error(fmt::format("selector '{}': expected a set like (a,b)", whole));
  }
  std::vector<std::string> values;
  std::string_view inner = text.substr(open + 1, close - open - 1);
  for (std::string_view v : split_requirements(inner)) {
    values.push_back(trim(v));
  }
  return values;
}

// The value at a dotted path ("metadata.name") as text; nullopt when absent.
std::optional<std::string> field_value(const json& object, const std::string& path) {
  const json* at = &object;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    std::string key =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!at->is_object() || !at->contains(key)) {
      return std::nullopt;
    }
    at = &(*at)[key];
    if (dot == std::string::npos) {
      break;
    }
    start = dot + 1;
  }
  if (at->is_string()) {
    return at->get<std::string>();
  }
  return at->dump();
}

}  // namespace

void Selector::add(std::string_view raw, bool field, std::vector<Requirement>& out) {
  std::string text = trim(raw);
  Requirement r;
  r.field = field;
  if (size_t at = text.find("!="); at != std::string::npos) {
    r = {field, trim(text.substr(0, at)), Requirement::Op::not_equals, {trim(text.substr(at + 2))}};
  } else if (size_t eq = text.find('='); eq != std::string::npos) {
    size_t skip = text.compare(eq, 2, "==") == 0 ? 2 : 1;
    r = {field, trim(text.substr(0, eq)), Requirement::Op::equals, {trim(text.substr(eq + skip))}};
  } else if (size_t notin = text.find(" notin "); !field && notin != std::string::npos) {
    r = {field, trim(text.substr(0, notin)), Requirement::Op::not_in, set_values(text, raw)};
  } else if (size_t in = text.find(" in "); !field && in != std::string::npos) {
    r = {field, trim(text.substr(0, in)), Requirement::Op::in, set_values(text, raw)};
  } else if (!field && !text.empty() && text[0] == '!') {
    r = {field, trim(text.substr(1)), Requirement::Op::absent, {}};
  } else if (!field) {
    r = {field, text, Requirement::Op::exists, {}};
  } else {
    throw Error(fmt::format("field selector '{}': expected field=value or field!=value", raw));
  }
  if (r.key.empty()) {
    throw Error(fmt::format("selector '{}': no key", raw));
  }
  out.push_back(std::move(r));
}

Selector Selector::parse(std::string_view labels, std::string_view fields) {
  Selector s;
  for (std::string_view part : split_requirements(labels)) {
    add(part, false, s.requirements_);
  }
  for (std::string_view part : split_requirements(fields)) {
    add(part, true, s.requirements_);
  }
  return s;
}

bool Selector::matches(const json& object) const {
  for (const Requirement& r : requirements_) {
    std::optional<std::string> value;
    if (r.field) {
      value = field_value(object, r.key);
    } else {
      const json& labels = object["metadata"].value("labels", json::object());
      if (labels.contains(r.key)) {
        value = labels[r.key].get<std::string>();
      }
    }
    auto in = [&] {
      return value && std::find(r.values.begin(), r.values.end(), *value) != r.values.end();
    };
    bool ok = true;
    switch (r.op) {
      case Requirement::Op::equals:
        ok = value.value_or(r.field ? "" : "\x01") == r.values.front();
        break;
      case Requirement::Op::not_equals:
        ok = value.value_or("") != r.values.front();
        break;
      case Requirement::Op::in:
        ok = in();
        break;
      case Requirement::Op::not_in:
        ok = !in();
        break;
      case Requirement::Op::exists:
        ok = value.has_value();
        break;
      case Requirement::Op::absent:
        ok = !value.has_value();
        break;
    }
    if (!ok) {
      return false;
    }
  }
  return true;
}

std::string selector_text(const nlohmann::json& selector) {
  std::string out;
  auto add = [&out](const std::string& part) {
    out += (out.empty() ? "" : ",") + part;
  };
  nlohmann::json match_labels = selector.value("matchLabels", nlohmann::json::object());
  nlohmann::json expressions = selector.value("matchExpressions", nlohmann::json::array());
  for (const auto& [key, value] : match_labels.items()) {
    add(key + "=" + value.get<std::string>());
  }
  for (const nlohmann::json& e : expressions) {
    std::string key = e.value("key", "");
    std::string op = e.value("operator", "");
    std::string values;
    nlohmann::json listed = e.value("values", nlohmann::json::array());
    for (const nlohmann::json& v : listed) {
      values += (values.empty() ? "" : ",") + v.get<std::string>();
    }
    if (op == "In" || op == "NotIn") {
      add(fmt::format("{} {} ({})", key, op == "In" ? "in" : "notin", values));
    } else if (op == "Exists" || op == "DoesNotExist") {
      add((op == "Exists" ? "" : "!") + key);
    } else {
      throw Error(fmt::format("labelSelector: unknown operator '{}'", op));
    }
  }
  return out;
}

}  // namespace zerodrop::kubeapi
