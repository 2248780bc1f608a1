#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kube/object.h"

namespace zerodrop::kube {

// Bounds on hostile or accidental input.
struct LoadLimits {
  int64_t max_file_bytes = 64 << 20;  // a larger file is a problem, not a crash or a stall
  // Node visits allowed per document: base + per_byte × document size. An alias bomb ("billion
  // laughs") that expands far beyond its text runs out of this budget.
  int64_t node_budget_base = 100'000;
  int64_t node_budget_per_byte = 64;
};

// A document, file or list item that could not be read; the rest of the input still is.
struct LoadProblem {
  std::string file;
  Mark mark;
  std::string message;  // without the "file:line:col: " prefix

  std::string str() const;  // "file:line:col: message"
};

struct Loaded {
  std::vector<Object> objects;
  std::vector<int> document_of;  // per object: the 0-based index of its document in the text
  std::vector<LoadProblem> problems;
  int64_t documents = 0;
  int64_t bytes = 0;
};

// The files PATHS name, in order: a file itself (a pipe too), a folder's *.yaml, *.yml and *.json
// files (recursively, folder symlinks followed once, sorted), "-" for stdin. A file met twice
// (a symlink and its target) is listed once. Throws Error for a path that does not exist, a
// folder that cannot be read or holds no such file.
std::vector<std::string> expand_paths(const std::vector<std::string>& paths);

// Whether PATH can be read only once: "-" (stdin), a pipe or a device.
bool is_stream(const std::string& path);

// Which documents to read: called with each document's 0-based index and text before it is
// parsed; a document it rejects is skipped unread (no object, no problem). Empty reads all.
using DocumentFilter = std::function<bool(int index, std::string_view document)>;

// Reads every document of TEXT (multi-document YAML, `kind: List`, JSON). `file` names it in
// positions and problems. Never throws for bad content: it becomes a LoadProblem.
Loaded load_text(std::string_view text, const std::string& file, const LoadLimits& limits = {},
                 const DocumentFilter& filter = {});

// A file's whole text, or stdin's for "-" (name "<stdin>"); `problem` is set instead when it
// cannot be read or is larger than limits.max_file_bytes.
struct FileText {
  std::string name;
  std::string text;
  std::optional<LoadProblem> problem;
};

FileText read_file(const std::string& path, const LoadLimits& limits = {});

// Reads one file, or stdin for "-" (shown as "<stdin>"); unreadable or oversized files become a
// LoadProblem.
Loaded load_file(const std::string& path, const LoadLimits& limits = {});

// Every object in a file or stdin ("-"). Throws Error "file:line:col: message" for the first
// problem: for callers (lab, sim) that need the whole file to be valid.
std::vector<Object> load_objects(const std::string& path_or_dash);

// first_workload()'s choice among objects already loaded (a file read once, with its Services).
std::optional<Workload> first_workload_of(const std::vector<Object>& objects);

}  // namespace zerodrop::kube
