#include "audit/output.h"

#include <map>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/rule.h"

namespace zerodrop::audit {
namespace {

std::string object_title(const ObjectRef& o) {
  if (o.kind.empty()) {
    return "";
  }
  std::string ns = o.namespace_name.empty() ? "" : o.namespace_name + "/";
  return fmt::format("{} {}{}", o.kind, ns, o.name.empty() ? "(unnamed)" : o.name);
}

std::string tag(const Finding& f) {
  return f.hole ? fmt::format("[{}, {}]", f.rule, record::to_string(*f.hole))
                : fmt::format("[{}]", f.rule);
}

void write_text_finding(const Finding& f, std::ostream& out) {
  out << fmt::format("{}:{}:{}: {}: {} {}\n", f.file, f.mark.line, f.mark.column,
                     to_string(f.severity), f.message, tag(f));
  if (!f.fix.empty()) {
    out << "  fix: " << f.fix << '\n';
  }
}

// A JSON string as nlohmann::json's dump() writes it (UTF-8 kept, control characters escaped),
// appended to `out`: one finding per workload or more, and a json tree each cost more than the
// rules that found them.
void append_json_string(std::string_view text, std::string& out) {
  out += '"';
  for (char ch : text) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned char>(ch));
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

// One finding as one line of JSON, keys in the sorted order nlohmann::json gives them.
std::string json_finding(const Finding& f) {
  std::string out = fmt::format("{{\"column\":{},\"file\":", f.mark.column);
  append_json_string(f.file, out);
  out += ",\"fix\":";
  append_json_string(f.fix, out);
  out += ",\"hole\":";
  if (f.hole) {
    append_json_string(record::to_string(*f.hole), out);
  } else {
    out += "null";
  }
  out += fmt::format(",\"line\":{},\"message\":", f.mark.line);
  append_json_string(f.message, out);
  out += ",\"object\":{\"container\":";
  append_json_string(f.object.container, out);
  out += ",\"kind\":";
  append_json_string(f.object.kind, out);
  out += ",\"name\":";
  append_json_string(f.object.name, out);
  out += ",\"namespace\":";
  append_json_string(f.object.namespace_name, out);
  out += "},\"rule\":";
  append_json_string(f.rule, out);
  out += ",\"severity\":";
  append_json_string(to_string(f.severity), out);
  out += '}';
  return out;
}

// Escapes for a GitHub workflow command: data, and property values (which also escape : and ,).
std::string escape_github(std::string_view text, bool property) {
  std::string out;
  for (char ch : text) {
    switch (ch) {
      case '%':
        out += "%25";
        break;
      case '\r':
        out += "%0D";
        break;
      case '\n':
        out += "%0A";
        break;
      case ':':
        out += property ? "%3A" : ":";
        break;
      case ',':
        out += property ? "%2C" : ",";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

class TextSink : public Sink {
public:
  explicit TextSink(std::ostream& out) : out_(out) {}

  void problem(const Finding& f) override { write_text_finding(f, out_); }

  void workload(const AuditedWorkload& w) override {
    if (w.findings.empty()) {
      return;
    }
    const kube::Meta& meta = w.view.workload->meta;
    out_ << fmt::format("{} ({}:{})\n", object_title(w.findings.front().object), meta.file,
                        meta.marks.self.line);
    for (const Finding& f : w.findings) {
      write_text_finding(f, out_);
    }
  }

  void finish(const Summary& summary) override { out_ << summary_line(summary) << '\n'; }

private:
  std::ostream& out_;
};

// Streamed one finding at a time: a tree of every finding costs more than the audit itself.
class JsonSink : public FindingSink {
public:
  explicit JsonSink(std::ostream& out) : out_(out) {}

  void finish(const Summary& s) override {
    if (first_) {
      out_ << "{\n  \"version\": 1,\n  \"findings\": [";
    }
    nlohmann::json summary = {
        {"files", s.files},           {"objects", s.objects},
        {"workloads", s.workloads},   {"skipped_helm_tests", s.skipped},
        {"errors", s.by_severity[2]}, {"warnings", s.by_severity[1]},
        {"infos", s.by_severity[0]},  {"holes", s.holes},
    };
    out_ << (first_ ? "],\n" : "\n  ],\n") << "  \"summary\": " << summary.dump() << "\n}\n";
  }

private:
  void finding(const Finding& f) override {
    out_ << (first_ ? "{\n  \"version\": 1,\n  \"findings\": [\n    " : ",\n    ")
         << json_finding(f);
    first_ = false;
  }

  std::ostream& out_;
  bool first_ = true;
};

class GithubSink : public FindingSink {
public:
  explicit GithubSink(std::ostream& out) : out_(out) {}

  void finish(const Summary& summary) override { out_ << summary_line(summary) << '\n'; }

private:
  void finding(const Finding& f) override {
    std::string_view command = f.severity == Severity::error     ? "error"
                               : f.severity == Severity::warning ? "warning"
                                                                 : "notice";
    std::string title =
        f.hole ? fmt::format("{} ({})", f.rule, record::to_string(*f.hole)) : std::string(f.rule);
    std::string text = f.fix.empty() ? f.message : fmt::format("{}\nfix: {}", f.message, f.fix);
    out_ << fmt::format("::{} file={},line={},col={},title={}::{}\n", command,
                        escape_github(f.file, true), f.mark.line, f.mark.column,
                        escape_github(title, true), escape_github(text, false));
  }

  std::ostream& out_;
};

void replay(const Report& report, std::unique_ptr<Sink> sink) {
  report.replay(*sink);
}

}  // namespace

std::string summary_line(const Summary& s) {
  auto plural = [](int64_t n, std::string_view word) {
    return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
  };
  std::string line = fmt::format(
      "audited {}, {}, {}: {}, {}, {}", plural(s.files, "file"), plural(s.objects, "object"),
      plural(s.workloads, "workload"), plural(s.by_severity[2], "error"),
      plural(s.by_severity[1], "warning"), plural(s.by_severity[0], "info"));
  if (s.skipped > 0) {
    line += fmt::format("; skipped {} Helm test hook{}", s.skipped, s.skipped == 1 ? "" : "s");
  }
  std::vector<std::string> holes;
  for (const auto& [hole, n] : s.holes) {
    holes.push_back(fmt::format("{} {}", hole, n));
  }
  if (!holes.empty()) {
    line += fmt::format(" (holes: {})", fmt::join(holes, ", "));
  }
  return line;
}

std::string summary_line(const Report& report) {
  return summary_line(report.summary());
}

std::unique_ptr<Sink> text_sink(std::ostream& out) {
  return std::make_unique<TextSink>(out);
}

std::unique_ptr<Sink> json_sink(std::ostream& out) {
  return std::make_unique<JsonSink>(out);
}

std::unique_ptr<Sink> github_sink(std::ostream& out) {
  return std::make_unique<GithubSink>(out);
}

std::unique_ptr<Sink> make_sink(const Options& options, std::ostream& out, std::ostream& err) {
  if (options.fix == FixPatches::on) {
    return patch_sink(options, out, err);
  }
  switch (options.format) {
    case Format::json:
      return json_sink(out);
    case Format::sarif:
      return sarif_sink(out);
    case Format::github:
      return github_sink(out);
    case Format::text:
      break;
  }
  return text_sink(out);
}

void write_text(const Report& report, std::ostream& out) {
  replay(report, text_sink(out));
}

void write_json(const Report& report, std::ostream& out) {
  replay(report, json_sink(out));
}

void write_sarif(const Report& report, std::ostream& out) {
  replay(report, sarif_sink(out));
}

void write_github(const Report& report, std::ostream& out) {
  replay(report, github_sink(out));
}

}  // namespace zerodrop::audit
