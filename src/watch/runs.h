#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "watch/lease.h"
#include "watch/verdict.h"

namespace zerodrop::watch {

// watch's run folders under one root (--out): one per rollout, named
// NAMESPACE.NAME.YYYYMMDDTHHMMSSZ (".2", ".3" when taken), each with verify's files, the
// cli's reports and watch.json (the result: verdict, Event reason and message).

// A new folder's name (not yet created).
std::string new_run_name(const std::string& root, const WorkloadKey& key, SystemTime now);

// Writes watch.json. Throws Error naming the file.
void write_result(const std::string& folder, const RolloutResult& r);

// Removes the oldest run folders (by name's time, then name) beyond `keep`. Only folders holding
// watch.json or events.ndjson are counted and removed. Returns how many were removed.
size_t retain(const std::string& root, size_t keep);

// The /runs/ index page: every run folder, newest first, its verdict and Event message, linking
// its report.html.
std::string index_html(const std::string& root);

// The file /runs/NAME/FILE names, when NAME is a run folder and FILE a plain file in it ("" FILE:
// report.html); nullopt for anything else (no "..", no deeper path).
std::optional<std::string> run_file(const std::string& root, std::string_view path);

}  // namespace zerodrop::watch
