#include "audit/routing_index.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "audit_testing.h"

namespace zerodrop::audit {
namespace {

std::vector<uint64_t> found(const SelectorIndex& index, std::string_view ns,
                            const kube::Labels& labels) {
  std::vector<uint64_t> out;
  index.find(ns, labels, [&](uint64_t v) { out.push_back(v); });
  return out;
}

// Helm puts app.kubernetes.io/instance (the release) in every selector, and it sorts first:
// filed under it, every workload would meet every Service of the release.
TEST(SelectorIndex, SelectorsSharingTheirFirstPairAreFiledUnderTheirOwn) {
  SelectorIndex index;
  for (int i = 0; i < 1000; ++i) {
    index.add("shop",
              {{"app.kubernetes.io/instance", "shop"},
               {"app.kubernetes.io/name", "svc-" + std::to_string(i)}},
              static_cast<uint64_t>(i));
  }
  kube::Labels pod = {{"app.kubernetes.io/instance", "shop"},
                      {"app.kubernetes.io/name", "svc-7"},
                      {"app.kubernetes.io/version", "1.0"}};
  EXPECT_EQ(found(index, "shop", pod), std::vector<uint64_t>{7});
  // One selector holding only the shared pair is still met by every workload of the release.
  index.add("shop", {{"app.kubernetes.io/instance", "shop"}}, 1000);
  EXPECT_EQ(found(index, "shop", pod), (std::vector<uint64_t>{7, 1000}));
}

TEST(SelectorIndex, TheSameLabelsInManyNamespacesMeetOnlyTheirOwn) {
  SelectorIndex index;
  for (int i = 0; i < 1000; ++i) {
    index.add("team-" + std::to_string(i), {{"app", "web"}}, static_cast<uint64_t>(i));
  }
  index.add("", {{"app", "web"}}, 1000);  // no namespace: applied with -n, may share any
  EXPECT_EQ(found(index, "team-5", {{"app", "web"}}), (std::vector<uint64_t>{5, 1000}));
  EXPECT_EQ(found(index, "elsewhere", {{"app", "web"}}), std::vector<uint64_t>{1000});
  EXPECT_EQ(found(index, "", {{"app", "web"}}).size(), 1001u);  // a workload without one: all
}

TEST(SelectorIndex, ASelectorWithoutPairsIsMetByItsNamespaceOnly) {
  SelectorIndex index;
  index.add("a", {}, 1);  // a PDB with matchExpressions only
  EXPECT_EQ(found(index, "a", {{"app", "web"}}), std::vector<uint64_t>{1});
  EXPECT_TRUE(found(index, "b", {{"app", "web"}}).empty());
}

kube::Workload workload(std::string ns, std::string name, kube::Labels labels) {
  kube::Workload w;
  w.meta.kind = "Deployment";
  w.meta.namespace_name = std::move(ns);
  w.meta.name = std::move(name);
  w.pod_labels = std::move(labels);
  return w;
}

kube::Service service(std::string ns, std::string name, kube::Labels selector) {
  kube::Service s;
  s.meta.namespace_name = std::move(ns);
  s.meta.name = std::move(name);
  s.selector = std::move(selector);
  return s;
}

TEST(RoutingIndex, CandidatesSkipTheAuditedFileAndOtherNamespaces) {
  RoutingIndex index;
  for (uint32_t file = 0; file < 3; ++file) {
    for (uint32_t ns = 0; ns < 100; ++ns) {
      index.add({file, ns}, service("team-" + std::to_string(ns), "web", {{"app", "web"}}));
      kube::HorizontalPodAutoscaler hpa;
      hpa.meta.namespace_name = "team-" + std::to_string(ns);
      hpa.target_kind = "Deployment";
      hpa.target_name = "web";
      index.add({file, 1000 + ns}, hpa);
    }
  }
  std::vector<uint64_t> out;
  index.candidates(workload("team-3", "web", {{"app", "web"}}), 1, out);
  std::sort(out.begin(), out.end());
  EXPECT_EQ(out,
            (std::vector<uint64_t>{DocumentRef{0, 3}.packed(), DocumentRef{0, 1003}.packed(),
                                   DocumentRef{2, 3}.packed(), DocumentRef{2, 1003}.packed()}));
}

// The Cluster matches exactly what the index offers: 2,000 Services of one Helm release, one
// per workload, each workload routed by its own Service only.
TEST(Cluster, ManyServicesOfOneReleaseEachRouteTheirOwnWorkload) {
  std::vector<kube::Object> objects;
  std::vector<kube::Workload> workloads;
  for (int i = 0; i < 2000; ++i) {
    std::string name = "svc-" + std::to_string(i);
    kube::Labels selector = {{"app.kubernetes.io/instance", "shop"},
                             {"app.kubernetes.io/name", name}};
    objects.emplace_back(service("shop", name, selector));
    selector["pod-template-hash"] = "abc";
    workloads.push_back(workload("shop", name, selector));
  }
  Cluster cluster(objects);
  for (int i : {0, 777, 1999}) {
    WorkloadView view = cluster.view_of(workloads[i]);
    ASSERT_EQ(view.services.size(), 1u);
    EXPECT_EQ(view.services[0]->meta.name, workloads[i].meta.name);
  }
}

}  // namespace
}  // namespace zerodrop::audit
