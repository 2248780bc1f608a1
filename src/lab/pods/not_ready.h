#pragma once

#include <functional>
#include <string>
#include <vector>

#include "lab/pods/spec.h"
#include "record/run_record.h"

namespace zerodrop::lab {

// Why the first pods never became Ready, from the events recorded so far: for each pod not
// Ready, its exit status and restarts, else its readiness probe's own last error (for tcp: the
// address nobody listens on), and its log (`pod_log(pod)`). Pods with the same cause share one
// clause. `readiness` is the probe the pods ran.
std::string why_not_ready(const std::vector<record::Event>& events, const ProbeSpec& readiness,
                          const std::function<std::string(const std::string&)>& pod_log);

// For pods of `image` that were never Ready: " (image IMAGE: LINE)", LINE the last line in the
// log of the first pod that exited (the runtime's words, or the program's own), so that a crash
// at start names its cause; " (image IMAGE)" when none exited.
std::string image_words(const std::string& image, const std::vector<record::Event>& events,
                        const std::function<std::string(const std::string&)>& pod_log);

}  // namespace zerodrop::lab
