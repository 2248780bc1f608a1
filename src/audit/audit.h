#pragma once

#include <iosfwd>
#include <vector>

#include "audit/options.h"
#include "audit/report.h"

namespace zerodrop::audit {

// Runs every rule over loaded objects; `problems` become invalid-manifest findings.
Report audit_objects(std::vector<kube::Object> objects,
                     const std::vector<kube::LoadProblem>& problems, const Options& options);

// Loads options.paths (files, folders, "-") and audits them in memory. Throws Error for a missing
// path.
Report audit_paths(const Options& options);

// Audits options.paths in two passes with memory bounded by the largest file (plus a compact
// copy of every Service, PDB, HPA and Ingress): the first reads only the documents that may hold
// routing objects, the second reads one file at a time and hands each workload to `sink`. Stdin
// ("-") is read once and kept. Returns what sink.finish() was given. Throws Error for a missing
// path.
Summary audit_stream(const Options& options, Sink& sink);

// True when a finding is at or above options.fail_on.
bool failed(const Summary& summary, const Options& options);

// The process exit code for a report: 1 if a finding is at or above options.fail_on, else 0.
int exit_code(const Report& report, const Options& options);

// `zerodrop audit`: audit, print findings (or --fix patches) to `out`, the summary of --fix to
// `err`; returns the exit code.
int run(const Options& options, std::ostream& out, std::ostream& err);

}  // namespace zerodrop::audit
