#include "verify/verify.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/exit_code.h"
#include "verify/action.h"
#include "verify/anchor.h"
#include "verify/api_client.h"
#include "verify/base_record.h"
#include "verify/dry_run.h"
#include "verify/measurement.h"
#include "verify/observer.h"
#include "verify/preflight.h"
#include "verify/propagation.h"
#include "verify/timeline.h"
#include "verify/watch.h"
#include "verify/watches.h"

namespace zerodrop::verify {
namespace {

// The load engine on its own thread, its records moved onto the timeline's clock.
class Load {
public:
  Load(const Options& o, Timeline& timeline) {
    load::Options options = o.load;
    for (const std::string& url : o.urls) {
      options.targets.push_back({"GET", url});
    }
    options.duration = std::chrono::hours(24);  // ended by stop_
    load::Hooks hooks;
    hooks.stop = &stop_;
    hooks.on_start = [this, &timeline](Clock::time_point start) {
      offset_ = std::chrono::duration_cast<Micros>(start - timeline.start());
      started_.store(true);
    };
    hooks.on_record = [this, &timeline](const record::RequestRecord& r) {
      record::RequestRecord moved = r;
      moved.intended += offset_;
      moved.done += offset_;
      for (auto* t : {&moved.sent, &moved.first_byte}) {
        if (*t) {
          **t += offset_;
        }
      }
      moved.router = "edge";
      timeline.add_request(std::move(moved));
    };
    thread_ = std::thread([this, options, hooks] {
      try {
        summary_ = load::run(options, hooks);
      } catch (const Error& e) {
        error_ = e.what();
      }
      finished_.store(true);
    });
  }

  ~Load() { stop(); }

  void stop() {
    stop_.store(true);
    if (thread_.joinable()) {
      thread_.join();
    }
  }

  const std::string& error() const { return error_; }

  // Waits until the engine has started (true) or refused its options (false, see error()).
  bool wait_started() {
    while (!started_.load()) {
      if (finished_.load()) {
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

private:
  std::atomic<bool> finished_{false};
  std::atomic<bool> stop_{false};
  std::atomic<bool> started_{false};
  Micros offset_{0};
  std::thread thread_;
  load::Summary summary_;
  std::string error_;
};

// What ends a wait early: an interrupt, or the proxy's death (every watch would stall).
class Guard {
public:
  Guard(const Options& o, KubectlProxy& proxy) : o_(o), proxy_(proxy) {}

  bool interrupted() const { return o_.interrupted && o_.interrupted->load(); }

  // Main thread only (KubectlProxy::running reaps).
  bool stop() {
    proxy_died_ = proxy_died_ || !proxy_.running();
    return interrupted() || proxy_died_;
  }

  bool proxy_died() const { return proxy_died_; }

private:
  const Options& o_;
  KubectlProxy& proxy_;
  bool proxy_died_ = false;
};

// Waits up to `d`, or until `done` holds or the guard stops the run. Returns done().
template <typename Fn>
bool wait_for(Guard& guard, Duration d, Fn done) {
  auto deadline = Clock::now() + d;
  while (!done()) {
    if (guard.stop() || Clock::now() >= deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

enum class Ending { finished, timed_out, interrupted, proxy_died };

Ending cut_short(const Guard& guard) {
  return guard.proxy_died()    ? Ending::proxy_died
         : guard.interrupted() ? Ending::interrupted
                               : Ending::timed_out;
}

void mark_old_pods(Timeline& timeline) {
  timeline.with_observer([](Observer& ob) {
    ob.mark_old_pods();
    return 0;
  });
}

// Warmup, the action, the rollout until verify's completion rule holds, then the tail.
Ending drive(const ApiClient& client, const Options& o, Timeline& timeline, Guard& guard) {
  wait_for(guard, o.warmup, [] { return false; });
  if (guard.stop()) {
    return cut_short(guard);
  }
  if (o.action != Action::watch) {
    mark_old_pods(timeline);
    act(client, o, timeline);
  } else {
    std::cerr << "zerodrop: verify: waiting for a rollout of deploy/" << o.deployment << "\n";
    bool changed = wait_for(guard, o.rollout_timeout, [&] {
      return timeline.with_observer([](Observer& ob) {
        return ob.deployment().generation > ob.first_generation().value_or(0);
      });
    });
    if (!changed) {
      return cut_short(guard);
    }
    mark_old_pods(timeline);
    timeline.add(api_event(timeline.now(), EventKind::rollout_started,
                           "a new generation of the Deployment was seen"));
  }
  bool complete = wait_for(guard, o.rollout_timeout, [&] {
    return timeline.with_observer([](Observer& ob) { return ob.rollout_complete(); });
  });
  if (!complete) {
    return cut_short(guard);
  }
  timeline.add(api_event(timeline.now(), EventKind::rollout_finished,
                         "rolled out, no old pod left, the EndpointSlices hold only new pods"));
  wait_for(guard, o.tail, [] { return false; });
  return guard.stop() ? cut_short(guard) : Ending::finished;
}

// How many agents: one per node (the nodes the API lists, at most --max-nodes), or --agents K;
// and a note when --max-nodes left nodes out.
std::pair<int, std::string> agent_count(const ApiClient& client, const Options& o) {
  if (o.agents == AgentMode::count) {
    return {o.agent_count, ""};
  }
  ApiResponse r = client.get("/api/v1/nodes");
  if (!r.ok()) {
    throw Error(
        fmt::format("cannot list the nodes to place one agent on each: {} (give "
                    "--agents K instead)",
                    error_text(r)));
  }
  auto nodes = static_cast<int>(
      nlohmann::json::parse(r.body).value("items", nlohmann::json::array()).size());
  std::string note = nodes > o.max_nodes ? fmt::format(
                         "{} nodes: agents on {} of them (--max-nodes)", nodes, o.max_nodes)
                                         : "";
  return {std::max(1, std::min(nodes, o.max_nodes)), note};
}

// The agents' Job of a new run (its owner is set once the anchor exists).
AgentJob agent_job(const Options& o, const Target& target, int count) {
  AgentJob job;
  job.namespace_name = o.namespace_name;
  job.run_id = new_run_id();
  job.image = o.agent_image;
  job.count = count;
  job.per_node = o.agents == AgentMode::per_node;
  job.service = target.service;
  job.rate = o.load.rate / job.count;
  job.keepalive = o.load.keepalive == load::Keepalive::on;
  job.fresh_share = o.load.fresh_share;
  job.timeout = o.load.timeout;
  job.backend_header = o.load.backend_header;
  job.headers = o.load.headers;
  job.path = o.agent_path;
  job.records = o.agent_records;
  job.deadline = o.warmup + o.rollout_timeout + o.tail + o.agent_ready_timeout;
  return job;
}

// Creates the agents' Job and waits until every agent is loading (else Error: what keeps them;
// the Job is deleted on the way out).
std::unique_ptr<Agents> start_agents(const ApiClient& client, const Options& o, const AgentJob& job,
                                     Timeline& timeline, Guard& guard) {
  AgentSink sink;
  sink.on_hello = [&timeline](const AgentHello& h) {
    timeline.agent_hello(h);
  };
  sink.on_request = [&timeline](const AgentHello& h, record::RequestRecord r) {
    timeline.agent_request(h, std::move(r));
  };
  sink.on_bucket = [&timeline](const AgentHello& h, const BackendBucket& b) {
    timeline.agent_bucket(h, b);
  };
  sink.on_summary = [&timeline](const AgentHello& h, const AgentSummary& s) {
    timeline.agent_summary(h, s);
  };
  sink.on_note = [&timeline](const std::string& text) {
    timeline.note(text);
  };
  auto agents = std::make_unique<Agents>(client, job, sink, o.keep);
  std::cerr << fmt::format("zerodrop: verify: {} agent(s) in job {} (image {})\n", job.count,
                           job.name(), job.image);
  bool ready = wait_for(guard, o.agent_ready_timeout, [&] { return agents->ready() >= job.count; });
  if (!ready && !guard.stop()) {
    std::string why;
    for (const std::string& p : agents->problems()) {
      why += "; " + p;
    }
    throw Error(fmt::format("only {} of {} agents were loading after {}{}", agents->ready(),
                            job.count, format_duration(o.agent_ready_timeout), why));
  }
  return agents;
}

}  // namespace

std::string deployment_name(const std::string& text) {
  auto slash = text.find('/');
  std::string kind = slash == std::string::npos ? "deploy" : text.substr(0, slash);
  std::string name = slash == std::string::npos ? text : text.substr(slash + 1);
  if (kind != "deploy" && kind != "deployment" && kind != "deployments"
      && kind != "deployments.apps" && kind != "deployment.apps") {
    throw Error(fmt::format("'{}': verify checks a Deployment: deploy/NAME", text));
  }
  if (name.empty() || name.find('/') != std::string::npos) {
    throw Error(fmt::format("'{}': expected deploy/NAME", text));
  }
  return name;
}

std::string context_namespace(const KubectlOptions& options) {
  char path[] = "/tmp/zerodrop-verify-ns.XXXXXX";
  int fd = ::mkstemp(path);
  if (fd < 0) {
    return "default";
  }
  ::close(fd);
  std::vector<std::string> argv{options.kubectl, "config", "view", "--minify",
                                "-o=jsonpath={..namespace}"};
  if (!options.kubeconfig.empty()) {
    argv.push_back("--kubeconfig=" + options.kubeconfig);
  }
  if (!options.context.empty()) {
    argv.push_back("--context=" + options.context);
  }
  ExitStatus status = Subprocess::spawn({argv, {}, path, {}}).wait();
  std::ifstream in(path);
  std::string ns;
  std::getline(in, ns);
  ::unlink(path);
  return status.success() && !ns.empty() ? ns : "default";
}

namespace {

// What the watched rollout left: how it ended, the load's error, the agents' nodes and the
// anchor kept by --keep.
struct Observed {
  Ending ending = Ending::finished;
  std::string load_error;
  std::vector<std::string> agent_nodes;
  std::string kept;
};

// Watches the Deployment while the agents and the load run and the action drives the rollout;
// every object it made is gone (or kept, with --keep) when it returns.
Observed observe(ApiClient& client, KubectlProxy& proxy, const Options& o, const Target& target,
                 std::optional<AgentJob>& job, Timeline& timeline) {
  Observed seen;
  Watches watches(client, {o.namespace_name, o.deployment, target.pod_selector, target.service},
                  timeline);
  Guard guard(o, proxy);
  // The anchor first: every object of the run is owned by it, so deleting it (on the way out,
  // or --cleanup after a crash) removes them all.
  std::unique_ptr<Anchor> anchor;
  std::unique_ptr<Agents> agents;
  if (job) {
    anchor = std::make_unique<Anchor>(client, o.namespace_name, job->run_id, o.deployment);
    if (o.keep) {
      anchor->keep();
      seen.kept = anchor->name();
    }
    job->owner = anchor->owner_reference();
    // The agents next: they must all be loading before the warm-up counts.
    agents = start_agents(client, o, *job, timeline, guard);
  }
  std::unique_ptr<Load> load;
  if (!o.urls.empty()) {
    load = std::make_unique<Load>(o, timeline);
    if (!load->wait_started()) {
      throw Error(load->error());
    }
  }
  seen.ending = drive(client, o, timeline, guard);
  if (load) {
    load->stop();
    seen.load_error = load->error();
  }
  if (agents) {
    agents->stop(o.load.timeout + std::chrono::seconds(15));
    seen.agent_nodes = timeline.agent_nodes();
  }
  return seen;
}

}  // namespace

int run(const Options& o, const Finish& finish) {
  KubectlProxy proxy(o.kubectl);
  ApiClient client(proxy.socket_path());
  Target target =
      preflight(client, {o.namespace_name, o.deployment, o.service, o.action, o.agents});
  for (const std::string& w : target.warnings) {
    std::cerr << "zerodrop: warning: audit of the live deploy/" << o.deployment << ": " << w
              << "\n";
  }
  if (o.action == Action::set_image) {
    check_set_image(o, target);
  }
  std::optional<AgentJob> job;
  std::string capped;
  if (o.agents != AgentMode::none) {
    auto [count, note] = agent_count(client, o);
    job = agent_job(o, target, count);
    capped = note;
  }
  if (o.dry_run) {
    print_dry_run(std::cout, o, target, job);
    return to_int(ExitCode::ok);
  }
  record::RunFolder folder(make_run_folder(o.out));
  Timeline timeline(folder, target.pod_template);
  if (!capped.empty()) {
    timeline.note(capped);
  }
  Observed seen = observe(client, proxy, o, target, job, timeline);
  if (!seen.kept.empty()) {
    std::cerr << fmt::format(
        "zerodrop: verify: kept configmap/{} and the Job it owns (--keep); 'zerodrop verify "
        "--cleanup -n {}' or 'kubectl delete configmap {} -n {}' removes them\n",
        seen.kept, o.namespace_name, seen.kept, o.namespace_name);
  }
  if (!seen.load_error.empty()) {
    throw Error(seen.load_error);
  }
  record::RunRecord run =
      close_measurement(timeline, base_record(o, target, seen.agent_nodes), folder);
  int code = finish(folder, run);
  Ending ending = seen.ending;
  if (ending == Ending::interrupted) {
    return to_int(ExitCode::interrupted);
  }
  if (ending == Ending::proxy_died) {
    std::cerr << fmt::format(
        "zerodrop: error: verify: kubectl proxy exited mid-run ({}); the "
        "record so far is in {}\n",
        proxy.last_error(), folder.dir());
    return to_int(ExitCode::usage);
  }
  if (ending == Ending::timed_out) {
    std::cerr << fmt::format(
        "zerodrop: error: verify: deploy/{} did not complete its rollout within {} ({}); the "
        "record is in {}\n",
        o.deployment, format_duration(o.rollout_timeout),
        timeline.with_observer([](Observer& ob) { return ob.progress(); }), folder.dir());
    return to_int(ExitCode::usage);
  }
  return code;
}

int run_cleanup(const KubectlOptions& kubectl, const std::string& namespace_name) {
  KubectlProxy proxy(kubectl);
  ApiClient client(proxy.socket_path());
  std::vector<std::string> removed = cleanup(client, namespace_name);
  for (const std::string& line : removed) {
    std::cout << "removed " << line << "\n";
  }
  if (removed.empty()) {
    std::cout << "nothing to clean up in namespace " << namespace_name << "\n";
  }
  return to_int(ExitCode::ok);
}

}  // namespace zerodrop::verify