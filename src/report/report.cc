// How a run ends: the diagnosis, the terminal report and the folder's report files.
#include "report/report.h"

#include <fstream>
#include <ostream>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::report {
namespace {

template <typename Render>
void write_file(const std::string& path, Render render) {
  std::ofstream out(path);
  if (!out) {
    throw Error(fmt::format("cannot write {}", path));
  }
  render(out);
  out.close();
  if (!out) {
    throw Error(fmt::format("cannot write {}", path));
  }
}

}  // namespace

void write_reports(const record::RunFolder& folder, const record::RunRecord& run,
                   const diagnose::Diagnosis& diagnosis) {
  write_file(folder.report_json(), [&](std::ostream& out) { write_json(out, run, diagnosis); });
  write_file(folder.report_html(), [&](std::ostream& out) { write_html(out, run, diagnosis); });
}

diagnose::Diagnosis finish_run(const std::optional<record::RunFolder>& folder,
                               const record::RunRecord& run, std::ostream& out,
                               const FinishOptions& options) {
  // Attribute every failure, show it, then leave the reports and what re-renders them.
  diagnose::Diagnosis diagnosis = diagnose::diagnose(run, options.diagnose);
  print_terminal(out, run, diagnosis, options.terminal, options.tty);
  if (folder) {
    write_reports(*folder, run, diagnosis);
    folder->write_run_json(run);
  }
  return diagnosis;
}

}  // namespace zerodrop::report
