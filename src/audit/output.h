#pragma once
// Renderers of an audit report. Each writes the whole report to `out`.

#include <iosfwd>
#include <string>

#include "audit/audit.h"

namespace zerodrop::audit {

// Compiler-style lines "file:line:col: severity: message [rule-id, hole]" and an indented
// "fix:" line, grouped under one header per object, then the summary line.
void write_text(const Report& report, std::ostream& out);

// {"version": 1, "findings": [...], "summary": {...}}; the schema is in docs/audit.md.
void write_json(const Report& report, std::ostream& out);

// SARIF 2.1.0, one run, rules from the catalogue, one result per finding with its location.
void write_sarif(const Report& report, std::ostream& out);

// GitHub Actions workflow commands: "::error file=…,line=…,col=…,title=…::message".
void write_github(const Report& report, std::ostream& out);

// Per workload with fixable findings, a strategic-merge patch (kubectl patch / kustomize
// patches) as a YAML document headed by comments naming the findings it closes.
void write_patches(const Report& report, const Options& options, std::ostream& out);

// "audited 3 files, 12 objects, 5 workloads: 2 errors, 3 warnings, 1 info".
std::string summary_line(const Report& report);

}  // namespace zerodrop::audit
