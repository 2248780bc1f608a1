#include "kube/loader.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include <gtest/gtest.h>

#include "base/error.h"
#include "kube/serving.h"
#include "testing/mutate.h"

namespace zerodrop::kube {
namespace {

TEST(Loader, WrongTypeIsAProblemWithPositionAndTheOtherDocumentsStillLoad) {
  constexpr const char* kText = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  replicas: three
---
apiVersion: v1
kind: Service
metadata: {name: ok}
spec: {selector: {app: web}, ports: [{port: 80, targetPort: http}]}
)";
  Loaded loaded = load_text(kText, "mixed.yaml");
  ASSERT_EQ(loaded.problems.size(), 1u);
  EXPECT_EQ(loaded.problems[0].str(),
            "mixed.yaml:5:13: spec.replicas: expected a whole number, got 'three'");
  ASSERT_EQ(loaded.objects.size(), 1u);
  const auto& svc = std::get<Service>(loaded.objects[0]);
  EXPECT_EQ(svc.selector.at("app"), "web");
  EXPECT_EQ(svc.ports.at(0).target_port.name, "http");
}

TEST(Loader, FilterSkipsDocumentsUnreadAndKeepsTheFilesLineNumbers) {
  constexpr const char* kText = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: skipped}
spec: {replicas: not-a-number}
---
apiVersion: v1
kind: Service
metadata: {name: kept}
spec: {selector: {app: web}, ports: [{port: 80}]}
)";
  auto only_services = [](int, std::string_view doc) {
    return doc.find("kind: Service") != std::string_view::npos;
  };
  Loaded loaded = load_text(kText, "f.yaml", {}, only_services);
  EXPECT_TRUE(loaded.problems.empty()) << "a skipped document is not read, so not a problem";
  ASSERT_EQ(loaded.objects.size(), 1u);
  const auto& svc = std::get<Service>(loaded.objects[0]);
  EXPECT_EQ(svc.meta.name, "kept");
  EXPECT_EQ(svc.meta.marks.self.line, 6);
  EXPECT_EQ(loaded.document_of, std::vector<int>{1});
  Loaded second =
      load_text(kText, "f.yaml", {}, [](int index, std::string_view) { return index == 1; });
  EXPECT_EQ(second.objects.size(), 1u);
  EXPECT_EQ(load_text(kText, "f.yaml").problems.size(), 1u);
}

TEST(Loader, DuplicateKeyIsAProblemAtItsSecondOccurrence) {
  // Two manifests concatenated without "---" make one mapping with every key twice.
  Loaded loaded = load_text(
      "apiVersion: v1\nkind: Service\nmetadata: {name: a}\napiVersion: v1\nkind: ConfigMap\n",
      "cat.yaml");
  ASSERT_EQ(loaded.problems.size(), 1u);
  EXPECT_EQ(loaded.problems[0].mark.line, 4);
  EXPECT_NE(loaded.problems[0].message.find("duplicate key 'apiVersion'"), std::string::npos)
      << loaded.problems[0].message;
  EXPECT_TRUE(loaded.objects.empty());

  // Deep inside, and in a mapping too large for the pairwise check.
  std::string big = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n";
  for (int i = 0; i < 40; ++i) {
    big += "  k" + std::to_string(i) + ": v\n";
  }
  big += "  k7: again\n";
  loaded = load_text(big, "big.yaml");
  ASSERT_EQ(loaded.problems.size(), 1u);
  EXPECT_EQ(loaded.problems[0].mark.line, 45);

  // The same key in two mappings, and a repeated merge key, are fine.
  loaded = load_text(
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {name: c}}\n"
      "data:\n  <<: {a: '1'}\n  <<: {b: '2'}\n",
      "ok.yaml");
  EXPECT_TRUE(loaded.problems.empty()) << loaded.problems[0].str();
}

TEST(Loader, InvalidYamlIsAProblemWithItsLine) {
  Loaded loaded = load_text("apiVersion: v1\nkind: Pod\n---\na: [1, 2\nb: c\n", "broken.yaml");
  ASSERT_EQ(loaded.problems.size(), 1u);
  EXPECT_GE(loaded.problems[0].mark.line, 4);
  EXPECT_NE(loaded.problems[0].message.find("invalid YAML"), std::string::npos);
  EXPECT_EQ(loaded.objects.size(), 1u);
}

TEST(Loader, DocumentsThatAreNotKubernetesObjectsAreProblems) {
  Loaded loaded = load_text("replicaCount: 3\nimage: {tag: x}\n---\n- a\n- b\n", "values.yaml");
  ASSERT_EQ(loaded.problems.size(), 2u);
  EXPECT_EQ(loaded.problems[0].str(),
            "values.yaml:1:1: not a Kubernetes object: 'apiVersion' and 'kind' are required");
  EXPECT_EQ(loaded.problems[1].mark.line, 4);
}

TEST(Loader, ExpandsListsAndKeepsGoodItems) {
  constexpr const char* kText = R"(apiVersion: v1
kind: List
items:
  - apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata: {name: pdb}
    spec:
      maxUnavailable: 1
      selector:
        matchExpressions: [{key: app, operator: In, values: [web, api]}]
  - apiVersion: autoscaling/v2
    kind: HorizontalPodAutoscaler
    metadata: {name: web}
    spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, maxReplicas: 9}
  - just a string
)";
  Loaded loaded = load_text(kText, "list.yaml");
  ASSERT_EQ(loaded.objects.size(), 2u);
  ASSERT_EQ(loaded.problems.size(), 1u);
  EXPECT_EQ(loaded.problems[0].mark.line, 15);
  const auto& pdb = std::get<PodDisruptionBudget>(loaded.objects[0]);
  EXPECT_EQ(pdb.max_unavailable, "1");
  EXPECT_TRUE(pdb.selector.matches({{"app", "api"}, {"x", "y"}}));
  EXPECT_FALSE(pdb.selector.matches({{"app", "db"}}));
  const auto& hpa = std::get<HorizontalPodAutoscaler>(loaded.objects[1]);
  EXPECT_EQ(hpa.target_name, "web");
  EXPECT_FALSE(hpa.min_replicas.has_value());
  EXPECT_EQ(hpa.max_replicas, 9);
}

TEST(Loader, ReadsIngressBackendsOfBothApiVersions) {
  constexpr const char* kText = R"(apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: in}
spec:
  defaultBackend: {service: {name: fallback, port: {number: 80}}}
  rules:
    - http:
        paths:
          - path: /
            backend: {service: {name: web, port: {name: http}}}
---
apiVersion: extensions/v1beta1
kind: Ingress
metadata: {name: old}
spec:
  rules: [{http: {paths: [{backend: {serviceName: api, servicePort: 8080}}]}}]
)";
  Loaded loaded = load_text(kText, "in.yaml");
  ASSERT_TRUE(loaded.problems.empty()) << loaded.problems[0].str();
  const auto& in = std::get<Ingress>(loaded.objects[0]);
  ASSERT_EQ(in.backends.size(), 2u);
  EXPECT_EQ(in.backends[0].service, "fallback");
  EXPECT_EQ(in.backends[1].port.name, "http");
  const auto& old = std::get<Ingress>(loaded.objects[1]);
  EXPECT_EQ(old.backends.at(0).port.number, 8080);
}

TEST(LabelSelector, FollowsKubernetesSemantics) {
  LabelSelector nil;
  EXPECT_FALSE(nil.matches({{"app", "web"}})) << "a nil selector matches nothing";
  LabelSelector empty{true, {}, {}};
  EXPECT_TRUE(empty.matches({{"app", "web"}})) << "an empty selector matches everything";
  using Op = LabelRequirement::Op;
  LabelSelector s{
      true, {{"app", "web"}}, {{"track", Op::not_in, {"canary"}}, {"tier", Op::exists, {}}}};
  EXPECT_TRUE(s.matches({{"app", "web"}, {"tier", "x"}}));
  EXPECT_FALSE(s.matches({{"app", "web"}, {"tier", "x"}, {"track", "canary"}}));
  EXPECT_FALSE(s.matches({{"app", "web"}}));
  LabelSelector gone{true, {}, {{"legacy", Op::does_not_exist, {}}}};
  EXPECT_FALSE(gone.matches({{"legacy", "1"}}));
  EXPECT_FALSE(map_selects({}, {{"app", "web"}})) << "a Service without a selector selects none";
  EXPECT_TRUE(map_selects({{"app", "web"}}, {{"app", "web"}, {"v", "2"}}));
}

TEST(Loader, AliasBombIsBoundedNotExpanded) {
  std::string text = "apiVersion: v1\nkind: List\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) {
      text += (j ? ", *a" : "*a") + std::to_string(i - 1);
    }
    text += "]\n";
  }
  text += "items: *a9\n";
  auto start = std::chrono::steady_clock::now();
  Loaded loaded = load_text(text, "bomb.yaml");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_FALSE(loaded.problems.empty());
  EXPECT_TRUE(loaded.objects.empty());
}

TEST(Loader, AliasesInsideTheSchemaRunOutOfBudget) {
  // Labels aliased a million times over stay within yaml-cpp (shared nodes) but would cost a
  // walk of every copy: the node budget stops it with a problem naming the document.
  std::string text = "apiVersion: v1\nkind: List\nx: &l {";
  for (int i = 0; i < 500; ++i) {
    text += (i ? ", k" : "k") + std::to_string(i) + ": v";
  }
  text += "}\nitems:\n";
  for (int i = 0; i < 1000; ++i) {
    text += "- {apiVersion: v1, kind: Pod, metadata: {labels: *l}}\n";
  }
  LoadLimits limits;
  limits.node_budget_base = 1000;
  limits.node_budget_per_byte = 4;
  Loaded loaded = load_text(text, "wide.yaml", limits);
  ASSERT_FALSE(loaded.problems.empty());
  EXPECT_NE(loaded.problems.back().message.find("too many nodes"), std::string::npos);
}

TEST(Loader, DeepNestingIsAProblemNotACrash) {
  std::string text = "apiVersion: v1\nkind: Pod\nspec: " + std::string(100000, '[') + "\n";
  Loaded loaded = load_text(text, "deep.yaml");
  EXPECT_EQ(loaded.problems.size(), 1u);
}

TEST(Loader, OversizedFileIsAProblem) {
  auto path = std::filesystem::temp_directory_path()
              / ("zerodrop-kube-oversized-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << "apiVersion: v1\nkind: Pod\nmetadata: {name: " << std::string(5000, 'a')
                      << "}\n";
  LoadLimits limits;
  limits.max_file_bytes = 1000;
  Loaded loaded = load_file(path.string(), limits);
  std::filesystem::remove(path);
  ASSERT_EQ(loaded.problems.size(), 1u);
  EXPECT_NE(loaded.problems[0].message.find("larger than the limit of 1000 bytes"),
            std::string::npos);
}

TEST(Loader, LoadObjectsThrowsTheFirstProblemAndFirstWorkloadFindsTheWorkload) {
  auto dir = std::filesystem::temp_directory_path()
             / ("zerodrop-kube-loader-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "sub");
  std::ofstream(dir / "bad.yaml") << "apiVersion: v1\nkind: Service\nspec: [1]\n";
  std::ofstream(dir / "sub" / "web.yml")
      << "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\n"
         "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n";
  std::ofstream(dir / "notes.txt") << "ignored";
  try {
    load_objects((dir / "bad.yaml").string());
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "bad.yaml").string() + ":3:7: spec: expected a mapping, got a list");
  }
  auto w = first_workload((dir / "sub" / "web.yml").string());
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->meta.name, "web");
  // A chart's migration Job before its Deployment: the Deployment is what rolls.
  std::ofstream(dir / "job-first.yaml")
      << "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate}\n---\n"
         "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n";
  EXPECT_EQ(first_workload((dir / "job-first.yaml").string())->meta.name, "web");
  std::ofstream(dir / "job-only.yaml")
      << "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate}\n";
  auto job = first_workload((dir / "job-only.yaml").string());
  ASSERT_TRUE(job.has_value());
  EXPECT_THROW(require_rolling_update(*job), Error);
  std::filesystem::remove(dir / "job-first.yaml");
  std::filesystem::remove(dir / "job-only.yaml");
  auto files = expand_paths({dir.string()});
  EXPECT_EQ(files.size(), 2u);
  EXPECT_THROW(expand_paths({(dir / "missing").string()}), Error);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zerodrop::kube

namespace zerodrop::kube {
namespace {

// Robustness: random byte edits, line deletions and duplications of real-looking fixtures must
// give objects or problems, never a crash, a hang or an exception (run under ASan in CI).
TEST(LoaderFuzz, RandomMutationsOfFixturesNeverCrash) {
  std::vector<std::string> seeds;
  for (const char* name : {"ingress-nginx-controller.yaml", "traefik.yaml",
                           "cert-manager-operator.yaml", "argo-rollout.yaml", "broken.yaml"}) {
    std::ifstream in(std::string(ZERODROP_AUDIT_DATA) + "/" + name);
    seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    ASSERT_FALSE(seeds.back().empty()) << name;
  }
  std::mt19937 random(20261130);  // fixed seed: a failure reproduces
  constexpr std::string_view alphabet = ":-[]{}&*!|>'\"#%@`,? \n\t0123456789abcxyz\\";
  int64_t objects = 0;
  int64_t problems = 0;
  for (int round = 0; round < 600; ++round) {
    int edits = 1 + static_cast<int>(random() % 8);
    std::string text =
        testing::mutate(seeds[round % seeds.size()], edits, random, {alphabet, 20, 80});
    Loaded loaded;
    ASSERT_NO_THROW(loaded = load_text(text, "fuzz.yaml")) << text;
    objects += static_cast<int64_t>(loaded.objects.size());
    problems += static_cast<int64_t>(loaded.problems.size());
    for (const LoadProblem& p : loaded.problems) {
      EXPECT_GE(p.mark.line, 1) << p.message;
    }
  }
  // Both outcomes happen: the mutations are neither all harmless nor all fatal.
  EXPECT_GT(objects, 0);
  EXPECT_GT(problems, 0);
}

}  // namespace
}  // namespace zerodrop::kube

namespace zerodrop::kube {
namespace {

TEST(Loader, DocumentOnItsMarkerLineKeepsItsColumns) {
  Loaded loaded = load_text(
      "--- # first\napiVersion: v1\nkind: ConfigMap\n...\n--- {apiVersion: v1, kind: Service, "
      "metadata: {name: inline}}\n",
      "inline.yaml");
  ASSERT_TRUE(loaded.problems.empty()) << loaded.problems[0].str();
  ASSERT_EQ(loaded.objects.size(), 2u);
  const Meta& meta = meta_of(loaded.objects[1]);
  EXPECT_EQ(meta.name, "inline");
  EXPECT_EQ(meta.marks.at("metadata.name").line, 5);
  EXPECT_EQ(meta.marks.at("metadata.name").column, 48);  // as in the file, "--- {" kept
  EXPECT_EQ(meta_of(loaded.objects[0]).marks.self.line, 2);
}

}  // namespace
}  // namespace zerodrop::kube

namespace zerodrop::kube {
namespace {

// A folder linked into the tree is audited; a link loop ends; a file reached through a link and
// by its own name is audited once.
TEST(Loader, FolderSymlinksAreFollowedOnceAndEachFileListedOnce) {
  namespace fs = std::filesystem;
  fs::path dir =
      fs::temp_directory_path() / ("zerodrop-kube-symlinks-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "tree");
  fs::create_directories(dir / "shared");
  std::ofstream(dir / "shared" / "svc.yaml") << "apiVersion: v1\nkind: Service\n";
  std::ofstream(dir / "tree" / "a.yaml") << "apiVersion: v1\nkind: Service\n";
  fs::create_directory_symlink(dir / "shared", dir / "tree" / "linked");
  fs::create_directory_symlink(dir / "tree", dir / "tree" / "loop");
  fs::create_symlink(dir / "tree" / "a.yaml", dir / "tree" / "b-link.yaml");
  std::vector<std::string> files = expand_paths({(dir / "tree").string()});
  EXPECT_EQ(files, (std::vector<std::string>{(dir / "tree" / "a.yaml").string(),
                                             (dir / "tree" / "linked" / "svc.yaml").string()}));
  // Named again on the command line: still once.
  files = expand_paths({(dir / "tree").string(), (dir / "shared" / "svc.yaml").string()});
  EXPECT_EQ(files.size(), 2u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace zerodrop::kube
