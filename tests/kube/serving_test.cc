#include "kube/serving.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "kube/loader.h"

namespace zerodrop::kube {
namespace {

Workload workload(std::string_view strategy, std::string_view containers) {
  std::string text =
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n"
      "  selector: {matchLabels: {app: web}}\n"
      + std::string(strategy) + "  template:\n    metadata: {labels: {app: web}}\n    spec:\n"
      + std::string(containers);
  Loaded loaded = load_text(text, "w.yaml");
  EXPECT_TRUE(loaded.problems.empty()) << loaded.problems.at(0).str();
  return std::get<Workload>(loaded.objects.at(0));
}

constexpr const char* kWithSidecar =
    "      initContainers:\n"
    "        - {name: proxy, image: envoy, restartPolicy: Always}\n"
    "      containers:\n"
    "        - {name: app, image: app}\n"
    "        - {name: logs, image: fluent}\n";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ServingContainer, IsTheFirstMainContainerNeverASidecar) {
  Workload w = workload("", kWithSidecar);
  EXPECT_EQ(serving_container(w, "").name, "app");
  EXPECT_EQ(serving_container(w, "logs").name, "logs");
}

TEST(ServingContainer, ErrorsNameTheFileAndLine) {
  Workload w = workload("", kWithSidecar);
  EXPECT_EQ(error_of([&] { serving_container(w, "db"); }),
            "w.yaml:8:5: Deployment 'web' has no container 'db'");
  std::string sidecar = error_of([&] { serving_container(w, "proxy"); });
  EXPECT_TRUE(
      sidecar.starts_with("w.yaml:10:11: container 'proxy' of Deployment 'web' is a "
                          "native sidecar"))
      << sidecar;
}

TEST(RequireRollingUpdate, RejectsRecreateAndBothZeroWhereWritten) {
  std::string containers = "      containers: [{name: app, image: app}]\n";
  EXPECT_NO_THROW(require_rolling_update(workload("", containers)));
  EXPECT_EQ(
      error_of(
          [&] { require_rolling_update(workload("  strategy: {type: Recreate}\n", containers)); }),
      "w.yaml:6:14: strategy Recreate of Deployment 'web' is not a rolling update; lab and sim "
      "roll RollingUpdate only");
  std::string zero = "  strategy:\n    rollingUpdate: {maxSurge: 0, maxUnavailable: 0}\n";
  std::string both = error_of([&] { require_rolling_update(workload(zero, containers)); });
  EXPECT_TRUE(
      both.starts_with("w.yaml:7:34: Deployment 'web': maxSurge and maxUnavailable may "
                       "not both be 0"))
      << both;
  std::string rounded = "  strategy:\n    rollingUpdate: {maxSurge: 0, maxUnavailable: 25%}\n";
  EXPECT_NO_THROW(require_rolling_update(workload(rounded, containers)));
}

}  // namespace
}  // namespace zerodrop::kube
