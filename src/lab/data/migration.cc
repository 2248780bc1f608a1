#include "lab/data/migration.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "base/error.h"
#include "lab/recording/recorder.h"

namespace zerodrop::lab {
namespace {

constexpr size_t kTail = 4096;   // bytes of a log read for its last lines
constexpr size_t kDetail = 600;  // bytes of output or SQL an event keeps

std::string tail_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size <= 0) {
    return "";
  }
  in.seekg(size > static_cast<std::streamoff>(kTail) ? size - static_cast<std::streamoff>(kTail)
                                                     : 0);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Blanks and line breaks folded to one space, cut to `limit` bytes from the end or the start.
std::string one_line(std::string_view text, size_t limit, bool keep_end) {
  std::string out;
  for (char c : text) {
    bool blank = c == ' ' || c == '\n' || c == '\r' || c == '\t';
    if (blank && (out.empty() || out.back() == ' ')) {
      continue;
    }
    out += blank ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') {
    out.pop_back();
  }
  if (out.size() > limit) {
    out = keep_end ? "…" + out.substr(out.size() - limit) : out.substr(0, limit) + "…";
  }
  return out;
}

// SQL without its `--` comment lines: the statements are what the record shows.
std::string without_comments(const std::string& sql) {
  std::istringstream in(sql);
  std::string out, line;
  while (std::getline(in, line)) {
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 2, "--") != 0) {
      out += line + '\n';
    }
  }
  return out;
}

// The SQL of the first *.sql file the command names: what the migration changes.
std::string sql_of(const std::vector<std::string>& command) {
  for (const std::string& arg : command) {
    size_t eq = arg.find('=');
    std::string path = eq == std::string::npos ? arg : arg.substr(eq + 1);
    if (path.size() > 4 && path.ends_with(".sql")) {
      std::ifstream in(path);
      std::ostringstream text;
      text << in.rdbuf();
      if (in) {
        return one_line(without_comments(text.str()), kDetail, false);
      }
    }
  }
  return "";
}

std::string joined(const std::vector<std::string>& argv) {
  return fmt::format("{}", fmt::join(argv, " "));
}

}  // namespace

std::string last_line(const std::string& path) {
  std::string text = tail_of(path);
  size_t end = text.find_last_not_of(" \r\n\t");
  if (end == std::string::npos) {
    return "";
  }
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start + 1));
}

Migration::Migration(MigrationSpec spec, std::vector<std::pair<std::string, std::string>> env,
                     std::string log_path, Recorder& recorder)
    : spec_(std::move(spec)),
      env_(std::move(env)),
      log_path_(std::move(log_path)),
      recorder_(recorder) {}

void Migration::start() {
  std::string command = joined(spec_.command);
  std::string sql = sql_of(spec_.command);
  recorder_.pod_event(record::EventKind::migration_started, "",
                      sql.empty() ? command : fmt::format("{}: {}", command, sql));
  try {
    process_ = Subprocess::spawn({spec_.command, env_, log_path_, log_path_});
  } catch (const Error& e) {
    throw Error(fmt::format("--migrate: {}", e.what()));
  }
}

bool Migration::done() {
  if (finished_ || !process_) {
    return finished_;
  }
  std::optional<ExitStatus> status = process_->try_wait();
  if (!status) {
    return false;
  }
  finished_ = true;
  std::string output = one_line(tail_of(log_path_), kDetail, true);
  record::Event e;
  e.kind = record::EventKind::migration_finished;
  e.exit_code = status->exit_code;
  e.signal = status->signal;
  e.detail = status->describe() + (output.empty() ? "" : ": " + output);
  recorder_.event(e);
  if (!status->success()) {
    std::string last = last_line(log_path_);
    failure_ = fmt::format("--migrate '{}' failed: {}{} (log {})", joined(spec_.command),
                           status->describe(), last.empty() ? "" : ": " + last, log_path_);
  }
  return true;
}

}  // namespace zerodrop::lab
