#include "kube/loader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>

#include <fmt/format.h>

#include "base/error.h"
#include "base/huge_pages.h"
#include "kube/text_input.h"
#include "kube/workload_reader.h"

namespace zerodrop::kube {
namespace {

namespace fs = std::filesystem;
using detail::Node;
using detail::Path;
using detail::Reader;
using detail::ReadError;

// One document of a multi-document stream: a view of the file's text and the line it starts on
// (0-based). Only a document that starts on its "---" line ("--- {a: 1}") owns a copy.
struct Chunk {
  std::string_view text;
  std::string owned;
  int first_line = 0;
};

bool is_marker(std::string_view line, std::string_view marker) {
  if (!line.starts_with(marker)) {
    return false;
  }
  return line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r'
         || line[3] == '\n';
}

// Whether a marker line carries content after the marker (not just blanks or a comment).
bool has_content(std::string_view rest) {
  size_t first = rest.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && rest[first] != '#';
}

// Splits on "---" and "..." lines as kubectl and kubeconform do. Each chunk is parsed on its own
// so that one broken document does not hide the others. A "--- value" line keeps its value,
// with the marker blanked so that columns stay right.
std::vector<Chunk> split_documents(std::string_view text) {
  std::vector<Chunk> chunks(1);
  size_t begin = 0;
  bool owning = false;
  int line_no = 0;
  size_t pos = 0;
  auto close = [&](size_t end) {
    if (!owning) {
      chunks.back().text = text.substr(begin, end - begin);
    }
  };
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    size_t next = end == std::string_view::npos ? text.size() : end + 1;
    std::string_view line = text.substr(pos, next - pos);
    if (is_marker(line, "---") || is_marker(line, "...")) {
      close(pos);
      owning = line.starts_with("---") && has_content(line.substr(3));
      chunks.push_back(Chunk{{}, {}, owning ? line_no : line_no + 1});
      if (owning) {
        chunks.back().owned.append("   ").append(line.substr(3));
      }
      begin = next;
    } else if (owning) {
      chunks.back().owned.append(line);
    }
    ++line_no;
    pos = next;
  }
  close(text.size());
  return chunks;
}

// A document holding several concatenated JSON values becomes one chunk per value (kubectl
// reads them all). Each copy is padded so that lines and columns stay those of the file.
void split_json_values(std::vector<Chunk>& chunks) {
  std::vector<Chunk> out;
  for (Chunk& chunk : chunks) {
    std::string_view text = chunk.owned.empty() ? chunk.text : std::string_view(chunk.owned);
    std::vector<size_t> starts = detail::json_value_starts(text);
    if (starts.empty()) {
      out.push_back(std::move(chunk));
      continue;
    }
    for (size_t k = 0; k < starts.size(); ++k) {
      size_t end = k + 1 < starts.size() ? starts[k + 1] : text.size();
      size_t line_start = text.rfind('\n', starts[k]);
      line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
      int line = chunk.first_line
                 + static_cast<int>(std::count(text.begin(), text.begin() + starts[k], '\n'));
      Chunk value{{}, std::string(starts[k] - line_start, ' '), line};
      value.owned.append(text.substr(starts[k], end - starts[k]));
      out.push_back(std::move(value));
    }
  }
  chunks = std::move(out);
}

bool is_list(const Meta& meta) {
  return meta.kind == "List" || (meta.kind.size() > 4 && meta.kind.ends_with("List"));
}

Object read_object(Reader& r, Node root, const Path& path, Meta meta) {
  if (auto kind = detail::workload_kind(meta)) {
    return detail::read_workload(r, root, path, std::move(meta), *kind);
  }
  return detail::read_other(r, root, path, std::move(meta));
}

void add_problem(Loaded& out, const ReadError& e, const std::string& file) {
  out.problems.push_back(LoadProblem{file, e.mark, e.detail});
}

// Reads a document that may be a List; each item is read on its own.
void read_root(Reader& r, Node root, Loaded& out) {
  Path top;
  if (!root->is_map()) {
    r.fail(root, top, "not a Kubernetes object: expected a mapping");
  }
  Meta meta = detail::read_meta(r, root, top);
  auto items = is_list(meta) ? r.child(root, top, "items") : std::nullopt;
  if (!items) {
    out.objects.push_back(read_object(r, root, top, std::move(meta)));
    return;
  }
  for (const detail::Entry& item : r.items(items->value, items->path)) {
    try {
      r.expect_map(item.value, item.path);
      out.objects.push_back(
          read_object(r, item.value, item.path, detail::read_meta(r, item.value, item.path)));
    } catch (const ReadError& e) {
      add_problem(out, e, r.file());
    }
  }
}

void load_chunk(const Chunk& chunk, const std::string& file, const LoadLimits& limits,
                Loaded& out) {
  detail::YamlDocument doc;
  try {
    doc.parse(chunk.owned.empty() ? chunk.text : std::string_view(chunk.owned));
  } catch (const detail::YamlError& e) {
    Mark at{chunk.first_line + e.line + 1, e.column + 1};
    out.problems.push_back(LoadProblem{file, at, fmt::format("invalid YAML: {}", e.message)});
    return;
  }
  Node root = doc.root();
  if (root == nullptr || root->is_null()) {
    return;  // empty document: only comments or a trailing "---"
  }
  ++out.documents;
  size_t size = chunk.owned.empty() ? chunk.text.size() : chunk.owned.size();
  int64_t budget =
      limits.node_budget_base + limits.node_budget_per_byte * static_cast<int64_t>(size);
  Reader reader(file, chunk.first_line, budget);
  try {
    read_root(reader, root, out);
  } catch (const ReadError& e) {
    add_problem(out, e, file);
  }
}

std::string display_name(const std::string& path) {
  return path == "-" ? "<stdin>" : path;
}

bool wanted(const fs::path& p) {
  std::string ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

}  // namespace

std::string LoadProblem::str() const {
  return fmt::format("{}:{}:{}: {}", file, mark.line, mark.column, message);
}

bool is_stream(const std::string& path) {
  std::error_code ec;
  return path == "-"
         || (fs::exists(path, ec) && !fs::is_regular_file(path, ec) && !fs::is_directory(path, ec));
}

namespace {

// Appends the manifest files below `dir` to `found`. Folder symlinks are followed; a folder
// already walked (a loop, or a second link to it) is not walked again.
void walk(const fs::path& dir, std::set<fs::path>& walked, std::vector<std::string>& found,
          std::error_code& ec) {
  fs::path real = fs::canonical(dir, ec);
  if (ec || !walked.insert(real).second) {
    return;
  }
  std::vector<fs::directory_entry> entries;  // sorted: a folder linked twice gets its first name
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    entries.push_back(*it);
  }
  std::sort(entries.begin(), entries.end());
  for (const fs::directory_entry& entry : entries) {
    std::error_code entry_ec;  // a dangling symlink is skipped, not the end of the folder
    if (ec) {
      return;
    }
    if (entry.is_directory(entry_ec)) {
      walk(entry.path(), walked, found, ec);
    } else if (entry.is_regular_file(entry_ec) && wanted(entry.path())) {
      found.push_back(entry.path().string());
    }
  }
}

// Drops the second name of a file already listed (a symlink and its target, a file named
// again): each file is audited once, under the first name met.
void drop_repeated_files(std::vector<std::string>& files) {
  std::set<fs::path> seen;
  std::erase_if(files, [&](const std::string& file) {
    std::error_code ec;
    if (file == "-" || is_stream(file)) {
      return false;
    }
    fs::path real = fs::canonical(file, ec);
    return !ec && !seen.insert(real).second;
  });
}

}  // namespace

std::vector<std::string> expand_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (path == "-" || fs::is_regular_file(path, ec) || is_stream(path)) {
      out.push_back(path);  // a file named outright is read whatever its name, pipes included
      continue;
    }
    if (!fs::is_directory(path, ec)) {
      throw Error(fmt::format("{}: no such file or folder", path));
    }
    std::vector<std::string> found;
    std::set<fs::path> walked;
    walk(path, walked, found, ec);
    if (ec) {
      throw Error(fmt::format("{}: cannot read the folder: {}", path, ec.message()));
    }
    if (found.empty()) {
      // Named on purpose: a CI gate that audits nothing must not pass silently.
      throw Error(fmt::format("{}: no *.yaml, *.yml or *.json file in this folder", path));
    }
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  drop_repeated_files(out);
  return out;
}

Loaded load_text(std::string_view text, const std::string& file, const LoadLimits& limits,
                 const DocumentFilter& filter) {
  Loaded out;
  out.bytes = static_cast<int64_t>(text.size());
  if (detail::has_wide_bom(text)) {  // what PowerShell's ">" writes
    std::string decoded(text);
    if (auto problem = detail::decode_to_utf8(decoded)) {
      out.problems.push_back(LoadProblem{file, Mark{1, 1}, *problem});
      return out;
    }
    Loaded loaded = load_text(decoded, file, limits, filter);
    loaded.bytes = out.bytes;
    return loaded;
  }
  if (text.starts_with("\xEF\xBB\xBF")) {
    text.remove_prefix(3);  // a UTF-8 byte order mark, as some Windows editors write
  }
  std::vector<Chunk> chunks = split_documents(text);
  split_json_values(chunks);
  if (!filter) {
    // About one object per document: growing the vector would move every object (~700 bytes
    // each) a second time and touch twice the memory.
    out.objects.reserve(chunks.size());
    note_heap_growth();
  }
  for (size_t i = 0; i < chunks.size(); ++i) {
    const Chunk& chunk = chunks[i];
    if (!filter || filter(static_cast<int>(i), chunk.owned.empty() ? chunk.text : chunk.owned)) {
      load_chunk(chunk, file, limits, out);
      out.document_of.resize(out.objects.size(), static_cast<int>(i));
      note_heap_growth();
    }
  }
  return out;
}

FileText read_file(const std::string& path, const LoadLimits& limits) {
  FileText out;
  out.name = display_name(path);
  auto problem = [&](std::string message) {
    std::string().swap(out.text);  // not just clear(): stdin's FileText is kept for the run
    out.problem = LoadProblem{out.name, Mark{1, 1}, std::move(message)};
    return std::move(out);
  };
  std::ifstream file;
  std::istream* in = &std::cin;
  std::error_code ec;
  int64_t size = -1;
  if (path != "-" && fs::is_regular_file(path, ec)) {
    size = static_cast<int64_t>(fs::file_size(path, ec));
    if (ec) {
      size = -1;
    } else if (size > limits.max_file_bytes) {
      return problem(  // known from its size: not read at all
          fmt::format("larger than the limit of {} bytes; not read", limits.max_file_bytes));
    }
  }
  if (size > 0) {
    // One buffer of the final size: growing it 64 KiB at a time would copy a 30 MiB file
    // several times and touch twice its memory.
    out.text.reserve(static_cast<size_t>(size));
    note_heap_growth();
  }
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) {
      return problem("cannot read the file");
    }
    in = &file;
  }
  char buffer[1 << 16];
  while (in->read(buffer, sizeof buffer) || in->gcount() > 0) {
    out.text.append(buffer, static_cast<size_t>(in->gcount()));
    if (static_cast<int64_t>(out.text.size()) > limits.max_file_bytes) {
      return problem(
          fmt::format("larger than the limit of {} bytes; not read", limits.max_file_bytes));
    }
  }
  if (auto reason = detail::decode_to_utf8(out.text)) {
    return problem(*reason);
  }
  return out;
}

Loaded load_file(const std::string& path, const LoadLimits& limits) {
  FileText file = read_file(path, limits);
  if (file.problem) {
    Loaded out;
    out.problems.push_back(std::move(*file.problem));
    return out;
  }
  return load_text(file.text, file.name, limits);
}

std::vector<Object> load_objects(const std::string& path_or_dash) {
  Loaded loaded = load_file(path_or_dash);
  if (!loaded.problems.empty()) {
    throw Error(loaded.problems.front().str());
  }
  return std::move(loaded.objects);
}

std::optional<Workload> first_workload(const std::string& path_or_dash) {
  return first_workload_of(load_objects(path_or_dash));
}

std::optional<Workload> first_workload_of(const std::vector<Object>& objects) {
  std::optional<Workload> completing;  // a Job or CronJob: returned only when nothing else is
  for (const Object& object : objects) {
    const auto* workload = std::get_if<Workload>(&object);
    if (workload && !workload->runs_to_completion()) {
      return *workload;
    }
    if (workload && !completing) {
      completing = *workload;
    }
  }
  return completing;
}

}  // namespace zerodrop::kube
