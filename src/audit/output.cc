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

nlohmann::json json_finding(const Finding& f) {
  return {
      {"rule", f.rule},
      {"hole", f.hole ? nlohmann::json(record::to_string(*f.hole)) : nlohmann::json()},
      {"severity", to_string(f.severity)},
      {"object",
       {{"kind", f.object.kind},
        {"namespace", f.object.namespace_name},
        {"name", f.object.name},
        {"container", f.object.container}}},
      {"file", f.file},
      {"line", f.mark.line},
      {"column", f.mark.column},
      {"message", f.message},
      {"fix", f.fix},
  };
}

struct Counts {
  int64_t by_severity[3] = {0, 0, 0};
  std::map<std::string, int64_t> by_hole;
};

Counts count(const Report& report) {
  Counts c;
  report.each_finding([&](const Finding& f) {
    ++c.by_severity[static_cast<int>(f.severity)];
    if (f.hole && f.severity != Severity::info) {
      ++c.by_hole[std::string(record::to_string(*f.hole))];
    }
  });
  return c;
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

}  // namespace

std::string summary_line(const Report& report) {
  Counts c = count(report);
  auto plural = [](int64_t n, std::string_view word) {
    return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
  };
  std::string line =
      fmt::format("audited {}, {}, {}: {}, {}, {}", plural(report.files, "file"),
                  plural(report.objects, "object"),
                  plural(static_cast<int64_t>(report.workloads.size()), "workload"),
                  plural(c.by_severity[2], "error"), plural(c.by_severity[1], "warning"),
                  plural(c.by_severity[0], "info"));
  if (report.skipped > 0) {
    line += fmt::format("; skipped {} Helm test hook{}", report.skipped,
                        report.skipped == 1 ? "" : "s");
  }
  std::vector<std::string> holes;
  for (const auto& [hole, n] : c.by_hole) {
    holes.push_back(fmt::format("{} {}", hole, n));
  }
  if (!holes.empty()) {
    line += fmt::format(" (holes: {})", fmt::join(holes, ", "));
  }
  return line;
}

void write_text(const Report& report, std::ostream& out) {
  for (const Finding& f : report.problems) {
    write_text_finding(f, out);
  }
  for (const AuditedWorkload& w : report.workloads) {
    if (w.findings.empty()) {
      continue;
    }
    const kube::Meta& meta = w.view.workload->meta;
    out << fmt::format("{} ({}:{})\n", object_title(w.findings.front().object), meta.file,
                       meta.marks.self.line);
    for (const Finding& f : w.findings) {
      write_text_finding(f, out);
    }
  }
  out << summary_line(report) << '\n';
}

void write_json(const Report& report, std::ostream& out) {
  // Streamed one finding at a time: a tree of every finding costs more than the audit itself.
  out << "{\n  \"version\": 1,\n  \"findings\": [";
  bool first = true;
  report.each_finding([&](const Finding& f) {
    out << (first ? "\n    " : ",\n    ") << json_finding(f).dump();
    first = false;
  });
  Counts c = count(report);
  nlohmann::json summary = {
      {"files", report.files},
      {"objects", report.objects},
      {"workloads", report.workloads.size()},
      {"skipped_helm_tests", report.skipped},
      {"errors", c.by_severity[2]},
      {"warnings", c.by_severity[1]},
      {"infos", c.by_severity[0]},
      {"holes", c.by_hole},
  };
  out << (first ? "],\n" : "\n  ],\n") << "  \"summary\": " << summary.dump() << "\n}\n";
}

void write_github(const Report& report, std::ostream& out) {
  report.each_finding([&](const Finding& f) {
    std::string_view command = f.severity == Severity::error     ? "error"
                               : f.severity == Severity::warning ? "warning"
                                                                 : "notice";
    std::string title =
        f.hole ? fmt::format("{} ({})", f.rule, record::to_string(*f.hole)) : std::string(f.rule);
    std::string text = f.fix.empty() ? f.message : fmt::format("{}\nfix: {}", f.message, f.fix);
    out << fmt::format("::{} file={},line={},col={},title={}::{}\n", command,
                       escape_github(f.file, true), f.mark.line, f.mark.column,
                       escape_github(title, true), escape_github(text, false));
  });
  out << summary_line(report) << '\n';
}

}  // namespace zerodrop::audit
