#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

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

// Folders left without watch.json by a watcher that was killed while measuring (SIGKILL, OOM,
// a lost node) would read "in progress" forever: each gets a watch.json with verdict
// "abandoned", no counts and why (`ended_reason`, `event_message`). A leader calls it once,
// before it measures anything, so that no folder of its own is in progress; the rollout itself,
// when still under way, is measured again from the middle (partial) in a folder of its own.
// Returns the names marked. Throws Error naming a watch.json it cannot write.
std::vector<std::string> mark_abandoned(const std::string& root, SystemTime now);

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
