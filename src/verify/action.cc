#include "verify/action.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "verify/api_client.h"

namespace zerodrop::verify {
void act(const ApiClient& client, const Options& o, Timeline& timeline) {
  nlohmann::json patch;
  std::string what;
  if (o.action == Action::set_image) {
    patch["spec"]["template"]["spec"]["containers"] =
        nlohmann::json::array({{{"name", o.set_image.container}, {"image", o.set_image.image}}});
    what = fmt::format("verify patched container {}'s image to {}", o.set_image.container,
                       o.set_image.image);
  } else {
    std::string at = rfc3339_now();
    patch["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"] = at;
    what = "verify patched restartedAt=" + at;
  }
  Micros sent = timeline.now();
  ApiResponse response = client.request(
      Method::patch,
      fmt::format("/apis/apps/v1/namespaces/{}/deployments/{}?fieldManager=zerodrop-verify",
                  o.namespace_name, o.deployment),
      patch.dump(), "application/strategic-merge-patch+json");
  if (!response.ok()) {
    throw Error(fmt::format("cannot patch deploy/{}: {}", o.deployment, error_text(response)));
  }
  timeline.add(api_event(
      sent, EventKind::rollout_started,
      fmt::format("{} (answered after {})", what, format_duration(timeline.now() - sent))));
}

void check_set_image(const Options& o, const Target& target) {
  std::string names;
  const auto& containers =
      target.deployment["spec"]["template"]["spec"].value("containers", nlohmann::json::array());
  for (const auto& c : containers) {
    if (c.value("name", "") == o.set_image.container) {
      if (c.value("image", "") == o.set_image.image) {
        throw Error(
            fmt::format("--action set-image: container {} of deploy/{} already runs {}: "
                        "nothing would roll out",
                        o.set_image.container, o.deployment, o.set_image.image));
      }
      return;
    }
    names += (names.empty() ? "" : ", ") + c.value("name", "");
  }
  throw Error(fmt::format("--action set-image: deploy/{} has no container {} (it has: {})",
                          o.deployment, o.set_image.container, names));
}

}  // namespace zerodrop::verify
