#include "lab/control/job_runner.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "base/error.h"
#include "kubeapi/store.h"
#include "lab/recording/recorder.h"

namespace zerodrop::lab {

using nlohmann::json;
using SteadyTime = std::chrono::steady_clock::time_point;

namespace {

constexpr const char* kJobs = "batch/jobs";
constexpr const char* kPods = "pods";

// The five random characters of a pod name, from Kubernetes' alphabet (no vowels), drawn from
// the Job's uid and the attempt so that names are stable within a run.
std::string suffix(const std::string& uid, int attempt) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  uint64_t h = std::hash<std::string>{}(uid + "/" + std::to_string(attempt));
  std::string out;
  for (int i = 0; i < 5; ++i, h /= kAlphabet.size()) {
    out += kAlphabet[h % kAlphabet.size()];
  }
  return out;
}

std::optional<std::chrono::seconds> seconds_of(const json& spec, const char* key) {
  if (!spec.contains(key) || !spec[key].is_number_integer()) {
    return std::nullopt;
  }
  return std::chrono::seconds(spec[key].get<int64_t>());
}

}  // namespace

JobRunner::JobRunner(kubeapi::Store& store, kubeapi::ClusterInfo info, Recorder& recorder)
    : store_(store), info_(std::move(info)), recorder_(recorder) {}

JobRunner::~JobRunner() = default;

void JobRunner::create(const std::string& name) {
  std::optional<json> object = store_.get(kJobs, name);
  if (!object) {
    return;  // deleted before the control thread came to it
  }
  Job job;
  job.name = name;
  job.object = *object;
  job.start = std::chrono::system_clock::now();
  if (auto limit = seconds_of((*object)["spec"], "activeDeadlineSeconds")) {
    job.deadline = std::chrono::steady_clock::now() + *limit;
  }
  jobs_[name] = std::move(job);
  recorder_.pod_event(record::EventKind::note, "", "a client created job " + name);
}

void JobRunner::remove(const std::string& name, const std::string& propagation,
                       const std::string& who) {
  auto it = jobs_.find(name);
  if (it == jobs_.end()) {
    return;
  }
  recorder_.pod_event(record::EventKind::note, "",
                      fmt::format("{} deleted job {} ({})", who, name, propagation));
  if (propagation == "Orphan") {
    jobs_.erase(it);  // its pods run on, ownerless
    return;
  }
  for (Pod* pod : pods_of(name)) {
    kill(*pod);
  }
  if (propagation == "Foreground") {
    it->second.foreground_deletion = true;  // the Job goes once its pods are gone
  } else {
    jobs_.erase(it);
  }
}

bool JobRunner::delete_pod(const std::string& name) {
  auto it = pods_.find(name);
  if (it == pods_.end()) {
    return false;
  }
  kill(*it->second);
  return true;
}

std::vector<JobRunner::Pod*> JobRunner::pods_of(const std::string& job) {
  std::vector<Pod*> out;
  for (auto& [name, pod] : pods_) {
    if (pod->state.job == job) {
      out.push_back(pod.get());
    }
  }
  return out;
}

// Kubelet's deletion of a Job's pod: the stop signal now, SIGKILL after the grace period. A
// finished pod's object goes at once.
void JobRunner::kill(Pod& pod) {
  if (pod.state.deletion || pod.gone) {
    return;
  }
  pod.state.deletion = std::chrono::system_clock::now();
  if (pod.process) {
    pod.process->stop(pod.state.grace);
  }
  put(pod);
}

void JobRunner::put(const Pod& pod) {
  if (!pod.gone) {
    store_.put(kPods, kubeapi::job_pod_object(pod.job, pod.state, info_));
  }
}

void JobRunner::poll() {
  for (auto& [name, pod] : pods_) {
    reap(*pod);
  }
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    Job& job = it->second;
    advance(job);
    std::vector<Pod*> pods = pods_of(job.name);
    bool all_gone = std::all_of(pods.begin(), pods.end(), [](Pod* p) { return p->gone; });
    if (job.foreground_deletion && all_gone) {
      store_.erase(kJobs, job.name);
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

void JobRunner::reap(Pod& pod) {
  if (pod.process && !pod.state.finished) {
    if (std::optional<ExitStatus> status = pod.process->poll()) {
      pod.state.finished = std::chrono::system_clock::now();
      pod.state.exit_code = status->exit_code;
      pod.state.signal = status->signal;
      recorder_.pod_event(
          record::EventKind::note, "",
          fmt::format("job pod {} on {}: {}", pod.state.name, pod.state.node, status->describe()));
      put(pod);
    }
  }
  bool stopped = pod.state.finished || !pod.process;
  if (pod.state.deletion && stopped && !pod.gone) {
    store_.erase(kPods, pod.state.name);  // a deleted pod's object goes once its container stopped
    pod.gone = true;
  }
}

// The job controller's step: give up (deadline, backoff), finish, or make the missing pods;
// then schedule and start what waits, and store the Job's status.
void JobRunner::advance(Job& job) {
  std::vector<Pod*> pods = pods_of(job.name);
  const json& spec = job.object["spec"];
  int failed = static_cast<int>(
      std::count_if(pods.begin(), pods.end(), [](Pod* p) { return p->state.failed(); }));
  std::set<int> done;
  for (Pod* p : pods) {
    if (p->state.succeeded()) {
      done.insert(p->state.index);
    }
  }
  int succeeded = spec["completionMode"] == "Indexed"
                      ? static_cast<int>(done.size())
                      : static_cast<int>(std::count_if(
                          pods.begin(), pods.end(), [](Pod* p) { return p->state.succeeded(); }));
  auto now = std::chrono::system_clock::now();
  if (!job.finished && !job.foreground_deletion) {
    if (job.deadline && std::chrono::steady_clock::now() >= *job.deadline) {
      job.failure = "DeadlineExceeded";
    } else if (failed > spec["backoffLimit"].get<int>()) {
      job.failure = "BackoffLimitExceeded";
    }
    if (job.failure || succeeded >= spec["completions"].get<int>()) {
      job.finished = now;
      recorder_.pod_event(record::EventKind::note, "",
                          fmt::format("job {} {}", job.name, job.failure.value_or("complete")));
      for (Pod* p : pods) {
        if (!p->state.finished) {
          kill(*p);  // finished pods stay, as the job controller leaves them
        }
      }
    } else {
      make_pods(job);
    }
  }
  for (Pod* p : pods_of(job.name)) {
    if (!p->process && !p->state.deletion && !p->state.finished) {
      start(*p, job);
    }
  }
  std::vector<kubeapi::JobPod> states;
  for (Pod* p : pods_of(job.name)) {
    states.push_back(p->state);
  }
  json status = kubeapi::job_status(job.object, states, job.failure, job.start, job.finished);
  store_.update(kJobs, job.name, [&](json& object) {
    object["status"] = status;
    return true;
  });
}

// New pods for the work left: the lowest indexes that neither succeeded nor run (Indexed), or
// as many as completions still need, up to parallelism running at once.
void JobRunner::make_pods(Job& job) {
  const json& spec = job.object["spec"];
  bool indexed = spec["completionMode"] == "Indexed";
  int completions = spec["completions"].get<int>();
  std::vector<Pod*> pods = pods_of(job.name);
  std::set<int> taken;
  int active = 0;
  int succeeded = 0;
  for (Pod* p : pods) {
    bool running = !p->state.finished && !p->state.deletion;
    active += running ? 1 : 0;
    succeeded += p->state.succeeded() ? 1 : 0;
    if (running || p->state.succeeded()) {
      taken.insert(p->state.index);
    }
  }
  int room = std::max(0, spec["parallelism"].get<int>() - active);
  for (int index = 0; room > 0 && index < completions; ++index) {
    if (indexed ? taken.count(index) > 0 : succeeded + active >= completions) {
      continue;
    }
    auto pod = std::make_unique<Pod>();
    pod->job = job.object;
    pod->state.job = job.name;
    pod->state.index = indexed ? index : -1;
    std::string uid = job.object["metadata"]["uid"].get<std::string>();
    pod->state.name = indexed ? fmt::format("{}-{}-{}", job.name, index, suffix(uid, job.attempts))
                              : fmt::format("{}-{}", job.name, suffix(uid, job.attempts));
    ++job.attempts;
    pod->state.created = std::chrono::system_clock::now();
    pod->state.grace = seconds_of(spec["template"]["spec"], "terminationGracePeriodSeconds")
                           .value_or(std::chrono::seconds(30));
    pods_[pod->state.name] = std::move(pod);
    ++active;
    --room;
  }
}

// The scheduler, then kubelet: a pod that fits a node runs its command there.
void JobRunner::start(Pod& pod, const Job& job) {
  const json& tmpl = pod.job["spec"]["template"];
  json object = kubeapi::job_pod_object(pod.job, pod.state, info_);
  std::vector<json> others = store_.list(kPods).items;
  kubeapi::Placement where =
      kubeapi::schedule(tmpl["spec"], object["metadata"]["labels"], info_.nodes, others);
  if (!where.node) {
    pod.state.why_unscheduled = where.why_not;
    put(pod);
    return;
  }
  pod.state.node = *where.node;
  const kubeapi::Node& node =
      *std::find_if(info_.nodes.begin(), info_.nodes.end(),
                    [&](const kubeapi::Node& n) { return n.name == *where.node; });
  put(pod);  // scheduled: Pending on its node, as the API shows it before the container runs
  object = kubeapi::job_pod_object(pod.job, pod.state, info_);
  try {
    pod.process.emplace(PodProcess::start(object, store_.list("services").items, node,
                                          recorder_.pod_log(pod.state.name)));
    pod.state.started = std::chrono::system_clock::now();
    recorder_.pod_event(
        record::EventKind::note, "",
        fmt::format("job {} runs pod {} on {}", job.name, pod.state.name, node.name));
  } catch (const Error& e) {
    // The runtime's ContainerCannotRun: the pod fails at once with exit code 128.
    pod.state.finished = std::chrono::system_clock::now();
    pod.state.exit_code = 128;
    recorder_.pod_event(record::EventKind::note, "",
                        fmt::format("job pod {} cannot run: {}", pod.state.name, e.what()));
  }
  put(pod);
}

}  // namespace zerodrop::lab
