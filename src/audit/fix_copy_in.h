#pragma once
// --fix on Kubernetes < 1.30 (no native sleep action): how to bring the static zerodrop into a
// pod whose image may have no sleep program (distroless, FROM scratch), without rebuilding it.

#include <cstdint>
#include <string>
#include <vector>

#include "audit/fix_json_patch.h"
#include "kube/workload.h"

namespace zerodrop::audit {

// A commented patch document, applied after the workload's own patch: a shared emptyDir, an init
// container from an image holding /zerodrop that runs `zerodrop copy-self` into it (that image
// has no cp), and in each container of `containers` the folder mounted at /zerodrop and a preStop
// running `/zerodrop/zerodrop sleep SECONDS`. Advice, not a patch: the image is the user's to
// name (ZERODROP_IMAGE). Patch lines start with "# " (`sed 's/^# //'` yields the patch), prose
// with "## "; `type` and `apply` are the workload patch's own (its "# apply:" line).
std::string copy_in_advice(const kube::Workload& w, const std::vector<std::string>& containers,
                           int64_t seconds, PatchType type, const std::string& apply);

}  // namespace zerodrop::audit
