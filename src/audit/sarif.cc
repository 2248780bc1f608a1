// SARIF 2.1.0 output (OASIS), in the shape GitHub code scanning ingests.
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/output.h"
#include "audit/rule.h"
#include "base/version.h"

namespace zerodrop::audit {
namespace {

using nlohmann::json;

std::string_view sarif_level(Severity s) {
  return kSarifLevels[static_cast<size_t>(s)];
}

// A path as a URI reference (RFC 3986): unreserved characters and '/' kept, the rest
// percent-encoded; absolute paths become file:// URIs.
std::string path_uri(std::string path) {
  if (path == "<stdin>") {
    return "stdin";
  }
  while (path.starts_with("./")) {
    path.erase(0, 2);
  }
  std::string out = path.starts_with("/") ? "file://" : "";
  for (unsigned char ch : path) {
    if (std::isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~' || ch == '/') {
      out += static_cast<char>(ch);
    } else {
      out += fmt::format("%{:02X}", ch);
    }
  }
  return out;
}

json sarif_rules() {
  json out = json::array();
  for (const RuleInfo& r : rules()) {
    std::string hole = r.hole ? std::string(record::to_string(*r.hole)) : "input";
    out.push_back({
        {"id", r.id},
        {"shortDescription", {{"text", r.title}}},
        {"fullDescription", {{"text", fmt::format("{}: {}", r.title, r.why)}}},
        {"help", {{"text", fmt::format("{} ({}). See docs/audit.md.", r.why, hole)}}},
        {"defaultConfiguration", {{"level", sarif_level(r.severity)}}},
        {"properties", {{"tags", {"zerodrop", hole}}}},
    });
  }
  return out;
}

int rule_index(std::string_view id) {
  auto all = rules();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].id == id) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

json sarif_result(const Finding& f) {
  json region = {{"startLine", std::max(1, f.mark.line)},
                 {"startColumn", std::max(1, f.mark.column)}};
  json location = {{"physicalLocation",
                    {{"artifactLocation", {{"uri", path_uri(f.file)}}}, {"region", region}}}};
  std::string text = f.fix.empty() ? f.message : fmt::format("{} Fix: {}", f.message, f.fix);
  json result = {
      {"ruleId", f.rule},
      {"level", sarif_level(f.severity)},
      {"message", {{"text", text}}},
      {"locations", json::array({location})},
      {"properties",
       {{"hole", f.hole ? json(record::to_string(*f.hole)) : json()},
        {"kind", f.object.kind},
        {"namespace", f.object.namespace_name},
        {"name", f.object.name},
        {"container", f.object.container}}},
  };
  if (int index = rule_index(f.rule); index >= 0) {
    result["ruleIndex"] = index;
  }
  return result;
}

// The document is written around the results, which are streamed one at a time.
class SarifSink : public FindingSink {
public:
  explicit SarifSink(std::ostream& out) : out_(out) {}

  void finish(const Summary&) override {
    if (first_) {
      out_ << head() << "[";
    }
    out_ << (first_ ? "]" : "\n      ]") << "\n    }\n  ]\n}\n";
  }

private:
  static std::string head() {
    json driver = {{"name", "zerodrop"},
                   {"version", std::string(base::version())},
                   {"semanticVersion", std::string(base::version())},
                   {"rules", sarif_rules()}};
    std::string tool = json{{"driver", driver}}.dump();
    return fmt::format(
        "{{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n  "
        "\"version\": \"2.1.0\",\n  \"runs\": [\n    {{\n      \"tool\": {},\n      "
        "\"results\": ",
        tool);
  }

  void finding(const Finding& f) override {
    if (first_) {
      out_ << head() << "[";
    }
    // Pretty, like the rest of the document: each line indented to the result's depth.
    std::string text = sarif_result(f).dump(2);
    std::string indented;
    for (char ch : text) {
      indented += ch;
      if (ch == '\n') {
        indented += "        ";
      }
    }
    out_ << (first_ ? "\n        " : ",\n        ") << indented;
    first_ = false;
  }

  std::ostream& out_;
  bool first_ = true;
};

}  // namespace

std::unique_ptr<Sink> sarif_sink(std::ostream& out) {
  return std::make_unique<SarifSink>(out);
}

}  // namespace zerodrop::audit
