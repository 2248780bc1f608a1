#pragma once

#include "verify/preflight.h"
#include "verify/timeline.h"
#include "verify/verify.h"

namespace zerodrop::verify {

// Starts the rollout: --action restart sends kubectl rollout restart's patch (a new
// restartedAt annotation on the pod template), set-image kubectl set image's (one container's
// image), both strategic merges; records rollout_started at the send time. Throws Error with
// the API's reason when refused.
void act(const ApiClient& client, const Options& options, Timeline& timeline);

// --action set-image: throws Error when the live template has no such container (naming those
// it has) or already runs that image (nothing would roll out).
void check_set_image(const Options& options, const Target& target);

}  // namespace zerodrop::verify
