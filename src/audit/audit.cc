#include "audit/audit.h"

#include <algorithm>
#include <map>
#include <optional>
#include <ostream>
#include <span>

#include <fmt/format.h>

#include "audit/migration.h"
#include "audit/output.h"
#include "audit/routing_index.h"
#include "audit/rule.h"
#include "audit/rules.h"
#include "base/error.h"
#include "base/exit_code.h"
#include "base/huge_pages.h"

namespace zerodrop::audit {
namespace {

bool is_helm_test_hook(const kube::Workload& w) {
  auto it = w.meta.annotations.find("helm.sh/hook");
  return it != w.meta.annotations.end() && it->second.find("test") != std::string::npos;
}

Finding problem_finding(const kube::LoadProblem& p) {
  Finding f;
  f.rule = rule_id::kInvalidManifest;
  f.severity = Severity::error;
  f.file = p.file;
  f.mark = p.mark;
  f.message = p.message;
  f.fix = "fix the document, or keep files that are not Kubernetes manifests out of the paths";
  return f;
}

// Said at info level: without client traffic there is no request a rollout could drop.
Finding no_traffic_finding(const WorkloadView& view) {
  const kube::Workload& w = *view.workload;
  if (view.scraped_by.empty()) {
    return make_finding(
        rule_id::kNoTraffic, w, nullptr, w.meta.marks.self,
        "no Service selects its pods: preStop, readiness and capacity rules skipped",
        "nothing to do if it takes no traffic; otherwise check the Service's selector");
  }
  return make_finding(
      rule_id::kNoTraffic, w, nullptr, w.meta.marks.self,
      fmt::format("only Prometheus scrapes reach its pods ({}): a missed scrape is no dropped "
                  "request, so preStop, readiness and capacity rules are skipped",
                  fmt::join(view.scraped_by, "; ")),
      "nothing to do; if clients do call this Service, name its port after what it serves "
      "(e.g. http) rather than metrics");
}

Findings run_rules(const WorkloadView& view, const Options& options) {
  const kube::Workload& w = *view.workload;
  if (w.runs_to_completion()) {
    return {};  // Jobs and CronJobs take no Service traffic and are not rolled
  }
  Findings out = check_termination(view, options);
  Findings probes = check_probes(view, options);
  out.insert(out.end(), probes.begin(), probes.end());
  if (!view.takes_traffic()) {
    out.push_back(no_traffic_finding(view));
    return out;
  }
  Findings capacity = check_capacity(view, options);
  out.insert(out.end(), capacity.begin(), capacity.end());
  return out;
}

// One workload's findings, with a value it cannot hold (e.g. maxUnavailable 150%) reported.
Findings audit_workload(const WorkloadView& view, const Options& options) {
  const kube::Workload& w = *view.workload;
  Findings all;
  try {
    all = run_rules(view, options);
  } catch (const Error& e) {
    all.push_back(make_finding(rule_id::kInvalidManifest, w, nullptr, w.meta.marks.self, e.what(),
                               "fix the value"));
  }
  std::erase_if(all, [&](const Finding& f) {
    return is_ignored(f, options.ignores, w.meta.annotations, w.pod_annotations);
  });
  return all;
}

// One workload audited against `cluster`; nothing for a Helm test hook, which is skipped.
std::optional<AuditedWorkload> audit_in(const kube::Workload& w, const Cluster& cluster,
                                        const Options& options) {
  if (is_helm_test_hook(w)) {
    return std::nullopt;
  }
  AuditedWorkload audited{cluster.view_of(w), {}};
  audited.findings = audit_workload(audited.view, options);
  return audited;
}

// Audits one workload against `cluster` and hands it to `sink`, or counts it as skipped.
void audit_one(const kube::Workload& w, const Cluster& cluster, const Options& options,
               Summary& summary, Sink& sink) {
  std::optional<AuditedWorkload> audited = audit_in(w, cluster, options);
  if (!audited) {
    ++summary.skipped;
    return;
  }
  ++summary.workloads;
  for (const Finding& f : audited->findings) {
    summary.count(f);
  }
  sink.workload(*audited);
}

}  // namespace

Report audit_objects(std::vector<kube::Object> objects,
                     const std::vector<kube::LoadProblem>& problems, const Options& options) {
  Report report;
  report.objects = static_cast<int64_t>(objects.size());
  report.storage = std::move(objects);
  report.cluster = std::make_unique<Cluster>(report.storage);
  for (const kube::LoadProblem& p : problems) {
    report.problems.push_back(problem_finding(p));
  }
  for (const kube::Object& object : report.storage) {
    if (const auto* w = std::get_if<kube::Workload>(&object)) {
      if (std::optional<AuditedWorkload> audited = audit_in(*w, *report.cluster, options)) {
        report.workloads.push_back(std::move(*audited));
      } else {
        ++report.skipped;
      }
    }
  }
  return report;
}

Report audit_paths(const Options& options) {
  std::vector<std::string> files = kube::expand_paths(options.paths);
  std::vector<kube::Object> objects;
  std::vector<kube::LoadProblem> problems;
  for (const std::string& file : files) {
    kube::Loaded loaded = kube::load_file(file, options.limits);
    std::move(loaded.objects.begin(), loaded.objects.end(), std::back_inserter(objects));
    problems.insert(problems.end(), loaded.problems.begin(), loaded.problems.end());
  }
  Report report = audit_objects(std::move(objects), problems, options);
  report.files = static_cast<int64_t>(files.size());
  return report;
}

// Audits the migration files; their findings go to `sink` as findings about a file.
void audit_migrations(const std::vector<std::string>& files, const Options& options,
                      Summary& summary, Sink& sink) {
  SchemaHistory history;
  for (const std::string& path : files) {
    kube::FileText file = kube::read_file(path, options.limits);
    std::vector<Finding> findings;
    if (file.problem) {
      findings.push_back(problem_finding(*file.problem));
    } else {
      findings = audit_migration(file.name, file.text, history);
    }
    for (const Finding& f : findings) {
      if (!is_ignored(f, options.ignores, {}, {})) {
        summary.count(f);
        sink.problem(f);
      }
    }
  }
  summary.files += static_cast<int64_t>(files.size());
}

namespace {

// The manifest files of one audit, read on demand. Stdin and pipes (`<(helm template …)`) cannot
// be read twice: their text is kept for the second pass.
class ManifestFiles {
public:
  ManifestFiles(std::vector<std::string> paths, const kube::LoadLimits& limits)
      : paths_(std::move(paths)), limits_(limits) {}

  uint32_t size() const { return static_cast<uint32_t>(paths_.size()); }

  // Calls fn(text) with file i's text (or its problem).
  template <typename Fn>
  void with(uint32_t i, Fn fn) {
    const std::string& path = paths_[i];
    if (!kube::is_stream(path)) {
      fn(kube::read_file(path, limits_));
      return;
    }
    auto it = streams_.find(path);
    if (it == streams_.end()) {
      it = streams_.emplace(path, kube::read_file(path, limits_)).first;
    }
    fn(it->second);
  }

private:
  std::vector<std::string> paths_;
  const kube::LoadLimits& limits_;
  std::map<std::string, kube::FileText> streams_;
};

// Pass 1: where every routing object is and what it matches on, parsing only the documents that
// name a routing kind. Only the other files' objects are looked up there: a single file needs no
// index.
RoutingIndex index_routing(ManifestFiles& files, const Options& options) {
  RoutingIndex index;
  for (uint32_t i = 0; files.size() > 1 && i < files.size(); ++i) {
    files.with(i, [&](const kube::FileText& file) {
      if (file.problem) {
        return;
      }
      kube::Loaded loaded =
          kube::load_text(file.text, file.name, options.limits,
                          [](int, std::string_view text) { return Cluster::may_route(text); });
      for (size_t k = 0; k < loaded.objects.size(); ++k) {
        index.add({i, static_cast<uint32_t>(loaded.document_of[k])}, loaded.objects[k]);
      }
    });
  }
  return index;
}

// Adds to `cluster` the documents of files other than `file` that `index` names as candidates
// for `objects`' workloads: one read of each such file, parsing just those documents.
void load_candidates(uint32_t file, const std::vector<kube::Object>& objects,
                     const RoutingIndex& index, ManifestFiles& files, const Options& options,
                     Cluster& cluster) {
  std::vector<uint64_t> wanted;
  for (const kube::Object& object : objects) {
    if (const auto* w = std::get_if<kube::Workload>(&object)) {
      index.candidates(*w, file, wanted);
    }
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  // Sorted by file, then document: one run of `wanted` per other file.
  for (size_t k = 0; k < wanted.size();) {
    uint32_t other = DocumentRef::unpack(wanted[k]).file;
    size_t end = k;
    while (end < wanted.size() && DocumentRef::unpack(wanted[end]).file == other) {
      ++end;
    }
    if (other != file) {
      std::span<const uint64_t> docs(wanted.data() + k, end - k);
      files.with(other, [&](const kube::FileText& text) {
        auto in_docs = [&](int document, std::string_view) {
          uint64_t at = DocumentRef{other, static_cast<uint32_t>(document)}.packed();
          return std::binary_search(docs.begin(), docs.end(), at);
        };
        for (const kube::Object& object :
             kube::load_text(text.text, text.name, options.limits, in_docs).objects) {
          cluster.add(object);
        }
      });
    }
    k = end;
  }
}

}  // namespace

Summary audit_stream(const Options& options, Sink& sink) {
  AuditInputs inputs = split_inputs(options.paths);
  if (inputs.manifests.empty()) {
    Summary summary;
    audit_migrations(inputs.migrations, options, summary, sink);
    sink.finish(summary);
    return summary;
  }
  ManifestFiles files(kube::expand_paths(inputs.manifests), options.limits);
  // A large file's objects are held at once: tens of megabytes of small allocations.
  enable_huge_heap();
  RoutingIndex index = index_routing(files, options);

  // Pass 2: one file at a time, every document; problems are reported here, once. Its
  // workloads are matched against its own routing objects and the candidate documents of the
  // other files, read again for just those documents.
  Summary summary;
  summary.files = static_cast<int64_t>(files.size());
  int64_t problems = 0;
  for (uint32_t i = 0; i < files.size(); ++i) {
    kube::Loaded loaded;
    files.with(i, [&](const kube::FileText& file) {
      if (file.problem) {
        loaded.problems.push_back(*file.problem);
      } else {
        loaded = kube::load_text(file.text, file.name, options.limits);
      }
    });
    for (const kube::LoadProblem& p : loaded.problems) {
      Finding f = problem_finding(p);
      ++problems;
      summary.count(f);
      sink.problem(f);
    }
    summary.objects += static_cast<int64_t>(loaded.objects.size());

    Cluster cluster(loaded.objects);
    load_candidates(i, loaded.objects, index, files, options, cluster);
    for (const kube::Object& object : loaded.objects) {
      if (const auto* w = std::get_if<kube::Workload>(&object)) {
        audit_one(*w, cluster, options, summary, sink);
      }
    }
  }
  if (summary.objects == 0 && problems == 0) {
    // As for an empty folder: a CI gate fed an empty render must not pass by auditing nothing.
    throw Error("the input holds no Kubernetes object (empty file or stdin?): nothing audited");
  }
  audit_migrations(inputs.migrations, options, summary, sink);
  sink.finish(summary);
  return summary;
}

bool failed(const Summary& summary, const Options& options) {
  for (int s = static_cast<int>(options.fail_on); s <= static_cast<int>(Severity::error); ++s) {
    if (summary.by_severity[s] > 0) {
      return true;
    }
  }
  return false;
}

int exit_code(const Report& report, const Options& options) {
  return to_int(failed(report.summary(), options) ? ExitCode::failed : ExitCode::ok);
}

int run(const Options& options, std::ostream& out, std::ostream& err) {
  std::unique_ptr<Sink> sink = make_sink(options, out, err);
  Summary summary = audit_stream(options, *sink);
  return to_int(failed(summary, options) ? ExitCode::failed : ExitCode::ok);
}

}  // namespace zerodrop::audit
