// zerodrop lab --workloads FILE: several lab runs in one process, one Kubernetes API.
#include "cli/lab_workloads.h"

#include <stdlib.h>

#include <algorithm>
#include <condition_variable>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/exit_code.h"
#include "lab/control/kube_api.h"
#include "lab/recording/recorder.h"
#include "report/report.h"

namespace zerodrop::cli {

namespace {

bool dns_label(const std::string& name) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  return !name.empty() && name.size() <= 40 && alnum(name.front()) && alnum(name.back())
         && std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '-'; });
}

// Counts the workloads down as each is in the API or has ended; wait() returns when none is left.
class Arrivals {
public:
  explicit Arrivals(size_t count) : left_(count) {}

  void arrived() {
    std::lock_guard lock(mutex_);
    --left_;
    changed_.notify_all();
  }

  void wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return left_ == 0; });
  }

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  size_t left_;
};

}  // namespace

std::vector<WorkloadLine> read_workloads(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw Error(fmt::format("--workloads: cannot read '{}'", path));
  }
  std::vector<WorkloadLine> out;
  std::set<std::string> names;
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    size_t start = text.find_first_not_of(" \t");
    if (start == std::string::npos || text[start] == '#') {
      continue;
    }
    size_t colon = text.find(':', start);
    std::string name = colon == std::string::npos ? "" : text.substr(start, colon - start);
    if (!dns_label(name)) {
      throw Error(fmt::format("{}:{}: expected 'NAME: FLAGS -- COMMAND', NAME a lowercase DNS "
                              "label of at most 40 characters (it names the Deployment)",
                              path, n));
    }
    if (!names.insert(name).second) {
      throw Error(fmt::format("{}:{}: workload '{}' is given twice", path, n, name));
    }
    out.push_back({name, text.substr(colon + 1), n});
  }
  if (out.empty()) {
    throw Error(fmt::format("--workloads: '{}' names no workload", path));
  }
  return out;
}

void write_rollout(const std::string& dir, const std::string& workload, int index,
                   const record::RunRecord& rollout, std::ostream& out) {
  record::RunFolder folder(fmt::format("{}/rollouts/{}", dir, index));
  bool buckets = rollout.requests.empty() && !rollout.buckets.empty();
  record::RunWriter writer(folder, buckets ? record::Traffic::buckets : record::Traffic::requests);
  for (const record::Event& e : rollout.events) {
    writer.write(e);
  }
  for (const record::RequestRecord& r : rollout.requests) {
    writer.write(r);
  }
  for (const record::TimeBucket& b : rollout.buckets) {
    writer.write(b);
  }
  writer.close();
  std::ostringstream terminal;
  report::finish_run(folder, rollout, terminal, {});
  std::string verdict = terminal.str().substr(0, terminal.str().find('\n'));
  out << fmt::format("rollout {} of {}: {} ({})\n", index, workload, verdict, folder.dir())
      << std::flush;
}

int run_workloads(std::vector<std::pair<std::string, lab::Options>> workloads,
                  const lab::KubeApiOptions& api, const std::string& root, std::ostream& out,
                  const FinishRun& finish) {
  SteadyClock clock;
  lab::Recorder recorder(root, clock);  // the cluster's: Jobs' and DaemonSets' notes and logs
  kubeapi::ClusterInfo cluster;
  int nodes = 0;
  for (const auto& [name, o] : workloads) {
    nodes = std::max(nodes, o.nodes);
  }
  for (int i = 1; i <= nodes; ++i) {
    cluster.nodes.push_back({fmt::format("node-{}", i), "127.0.0.1", 0});
  }
  cluster.start_wall = std::chrono::system_clock::now();
  lab::KubeApiOptions shared = api;
  shared.hub = std::make_shared<lab::KubeApiHub>(api, cluster, recorder, root);
  std::mutex out_mutex;
  Arrivals arrivals(workloads.size());
  std::vector<std::optional<lab::Result>> results(workloads.size());
  std::vector<std::string> errors(workloads.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < workloads.size(); ++i) {
    auto& [name, o] = workloads[i];
    o.out_dir = root + "/" + name;
    o.kube_api = shared;
    o.kube_api->deployment = name;
    o.kube_api->pod_prefix = name + "-";
    auto in_api = std::make_shared<std::once_flag>();
    o.on_kube_api = [&arrivals, in_api](const std::string&, const std::string&) {
      std::call_once(*in_api, [&] { arrivals.arrived(); });
    };
    o.on_rollout = [&out, &out_mutex, dir = o.out_dir, name = name](int index,
                                                                    const record::RunRecord& r) {
      std::lock_guard lock(out_mutex);
      write_rollout(dir, name, index, r, out);
    };
    threads.emplace_back([&, i, in_api] {
      try {
        results[i] = lab::run(workloads[i].second);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
      std::call_once(*in_api, [&] { arrivals.arrived(); });  // ended before it was in the API
    });
  }
  arrivals.wait();
  std::string names;
  for (const auto& [name, o] : workloads) {
    names += (names.empty() ? "" : ", ") + name;
  }
  std::cerr << "zerodrop lab: Kubernetes API at " << shared.hub->url() << " (deployments "
            << names << "); export KUBECONFIG=" << shared.hub->kubeconfig() << std::endl;
  for (std::thread& t : threads) {
    t.join();
  }
  for (auto& [name, o] : workloads) {
    o.kube_api->hub.reset();
  }
  shared.hub.reset();  // the API stops, the DaemonSets' pods are killed: before the recorder goes
  int code = to_int(ExitCode::ok);
  for (size_t i = 0; i < workloads.size(); ++i) {
    const std::string& name = workloads[i].first;
    if (!results[i]) {
      std::cerr << "zerodrop lab: error: workload " << name << ": " << errors[i] << "\n";
      code = to_int(ExitCode::usage);
      continue;
    }
    out << "== workload " << name << " ==\n";
    diagnose::Diagnosis d =
        finish(record::RunFolder(results[i]->out_dir), results[i]->run, out);
    if (code == to_int(ExitCode::ok) || code == to_int(ExitCode::failed)) {
      code = results[i]->interrupted                 ? to_int(ExitCode::interrupted)
             : d.verdict != diagnose::Verdict::pass ? to_int(ExitCode::failed)
                                                     : code;
    }
  }
  out << "run folder: " << root << "\n";
  return code;
}

int run_workload_file(const std::string& path,
                      const std::function<lab::Options(const std::string& args)>& parse,
                      const lab::KubeApiOptions& api, int rollouts, const std::string& out_dir,
                      std::ostream& out, const FinishRun& finish) {
  std::vector<std::pair<std::string, lab::Options>> workloads;
  for (const WorkloadLine& w : read_workloads(path)) {
    try {
      lab::Options o = parse(w.args);
      o.rollouts = rollouts;
      o.live = false;  // one terminal, several runs
      workloads.emplace_back(w.name, std::move(o));
    } catch (const std::exception& e) {
      throw Error(fmt::format("{}:{}: {}", path, w.line, e.what()));
    }
  }
  std::string root = out_dir;
  if (root.empty()) {
    char pattern[] = "/tmp/zerodrop-lab-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) {
      throw Error("--workloads: cannot create a folder like /tmp/zerodrop-lab-XXXXXX");
    }
    root = pattern;
  }
  std::cerr << "zerodrop lab: run folder " << root << std::endl;
  return run_workloads(std::move(workloads), api, root, out, finish);
}

}  // namespace zerodrop::cli
