#pragma once
// Renderers of an audit, as sinks fed one workload at a time (audit_stream), or given a whole
// in-memory report (the write_* functions replay it into the same sinks).

#include <iosfwd>
#include <memory>
#include <string>

#include "audit/options.h"
#include "audit/report.h"

namespace zerodrop::audit {

// A sink that renders findings one by one, whether from unreadable input or from a workload.
class FindingSink : public Sink {
public:
  void problem(const Finding& f) override { finding(f); }

  void workload(const AuditedWorkload& w) override {
    for (const Finding& f : w.findings) {
      finding(f);
    }
  }

protected:
  virtual void finding(const Finding& f) = 0;
};

// The sink `zerodrop audit` writes through: --fix patches to `out` and the summary to `err`, or
// findings in options.format to `out`.
std::unique_ptr<Sink> make_sink(const Options& options, std::ostream& out, std::ostream& err);

// Compiler-style lines "file:line:col: severity: message [rule-id, hole]" and an indented
// "fix:" line, grouped under one header per object, then the summary line.
std::unique_ptr<Sink> text_sink(std::ostream& out);
// {"version": 1, "findings": [...], "summary": {...}}; the schema is in docs/audit.md.
std::unique_ptr<Sink> json_sink(std::ostream& out);
// SARIF 2.1.0, one run, rules from the catalogue, one result per finding with its location.
std::unique_ptr<Sink> sarif_sink(std::ostream& out);
// GitHub Actions workflow commands: "::error file=…,line=…,col=…,title=…::message".
std::unique_ptr<Sink> github_sink(std::ostream& out);
// Per workload with fixable findings, a strategic-merge patch (kubectl patch / kustomize
// patches) as a YAML document headed by comments naming the findings it closes; the summary
// line goes to `err`.
std::unique_ptr<Sink> patch_sink(const Options& options, std::ostream& out, std::ostream& err);

void write_text(const Report& report, std::ostream& out);
void write_json(const Report& report, std::ostream& out);
void write_sarif(const Report& report, std::ostream& out);
void write_github(const Report& report, std::ostream& out);
// Patches only (no summary line).
void write_patches(const Report& report, const Options& options, std::ostream& out);

// "audited 3 files, 12 objects, 5 workloads: 2 errors, 3 warnings, 1 info".
std::string summary_line(const Summary& summary);
std::string summary_line(const Report& report);

}  // namespace zerodrop::audit
