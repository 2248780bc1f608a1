// sim -f and audit read the same preStop, grace and strategy from every workload of the
// evaluation corpus (../shared/eval/manifests, or $SHARED_DIR/eval/manifests), read at test time.
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "audit/pre_stop.h"
#include "base/error.h"
#include "kube/loader.h"
#include "kube/rollout.h"
#include "kube/serving.h"
#include "sim/workload_options.h"

namespace zerodrop::sim {
namespace {

std::filesystem::path corpus() {
  const char* shared = std::getenv("SHARED_DIR");
  return std::filesystem::path(shared != nullptr ? shared : ZERODROP_SHARED_DIR) / "eval"
         / "manifests";
}

// One workload as sim -f reads it (apply_workload) against audit's reading of the same object.
void expect_same_reading(const kube::Workload& w, int& compared) {
  Options o;
  std::optional<std::string> unknown;
  try {
    unknown = apply_workload(o, w, "");
  } catch (const Error& e) {
    // Both engines refuse the same workloads, with the file:line of the culprit.
    std::string why = e.what();
    EXPECT_TRUE(why.starts_with(w.meta.file + ":")) << why;
    bool rolls = w.strategy.type != "Recreate" && w.strategy.type != "OnDelete";
    bool has_main = std::any_of(w.containers.begin(), w.containers.end(),
                                [](const kube::Container& c) { return !c.sidecar; });
    EXPECT_FALSE(rolls && has_main) << why;
    return;
  }
  std::string name = w.meta.file + " " + w.meta.name;
  const kube::Container& c = kube::serving_container(w, "");
  EXPECT_EQ(o.grace, static_cast<double>(w.grace_seconds())) << name;
  std::optional<double> audit_delay =
      c.pre_stop ? audit::delay_seconds(audit::pre_stop_delay(*c.pre_stop)) : 0.0;
  EXPECT_EQ(unknown.has_value(), !audit_delay.has_value()) << name;
  if (audit_delay) {
    EXPECT_EQ(o.prestop, *audit_delay) << name;
  }
  if (w.strategy.max_unavailable) {
    kube::RolloutLimits sim = kube::resolve_limits(o.max_surge, o.max_unavailable, o.replicas);
    kube::RolloutLimits audit =
        kube::resolve_limits(w.strategy.max_surge.value_or(IntOrPercent::count(0)),
                             *w.strategy.max_unavailable, o.replicas);
    EXPECT_EQ(sim.max_surge, audit.max_surge) << name;
    EXPECT_EQ(sim.max_unavailable, audit.max_unavailable) << name;
  }
  ++compared;
}

TEST(ManifestAgreement, SimAndAuditReadTheSamePreStopGraceAndStrategy) {
  std::filesystem::path dir = corpus();
  if (!std::filesystem::is_directory(dir)) {
    GTEST_SKIP() << "no evaluation corpus at " << dir;
  }
  int compared = 0;
  for (const std::string& file : kube::expand_paths({dir.string()})) {
    kube::Loaded loaded = kube::load_file(file);  // audit's reader
    for (const kube::Object& object : loaded.objects) {
      const auto* w = std::get_if<kube::Workload>(&object);
      if (w == nullptr) {
        continue;
      }
      if (!w->runs_to_completion()) {
        expect_same_reading(*w, compared);
      }
    }
  }
  EXPECT_GT(compared, 20) << "the corpus should hold dozens of workloads";
}

}  // namespace
}  // namespace zerodrop::sim
