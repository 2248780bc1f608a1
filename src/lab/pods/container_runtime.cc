#include "lab/pods/container_runtime.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/subprocess.h"
#include "lab/pods/pod.h"
#include "lab/recording/recorder.h"

extern char** environ;

namespace zerodrop::lab {
namespace {

// The program's full path when `name` is an executable file in PATH, else "".
std::string in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of(" \n\r\t");
  if (end == std::string::npos) {
    return "";
  }
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - start);
}

std::vector<std::string> strings_of(const nlohmann::json& value) {
  std::vector<std::string> out;
  if (value.is_array()) {
    for (const nlohmann::json& s : value) {
      out.push_back(s.is_string() ? s.get<std::string>() : s.dump());
    }
  }
  return out;
}

}  // namespace

const char* to_string(RuntimeKind kind) {
  return kind == RuntimeKind::podman ? "podman" : "docker";
}

RuntimeKind parse_runtime(const std::string& text, const std::string& what) {
  if (text == "podman") {
    return RuntimeKind::podman;
  }
  if (text == "docker") {
    return RuntimeKind::docker;
  }
  throw Error(fmt::format("{}: expected podman or docker, got '{}'", what, text));
}

RuntimeKind find_runtime() {
  if (!in_path("podman").empty()) {
    return RuntimeKind::podman;
  }
  if (!in_path("docker").empty()) {
    return RuntimeKind::docker;
  }
  throw Error(
      "no command and no container runtime: install podman and runc (scripts/setup.sh test) "
      "to run the manifest's image, or give the server to run after --");
}

std::vector<std::string> container_argv(const ImageConfig& image, const std::string& image_name,
                                        const std::vector<std::string>& command,
                                        const std::vector<std::string>& args) {
  std::vector<std::string> argv = command.empty() ? image.entrypoint : command;
  const std::vector<std::string>& rest = command.empty() && args.empty() ? image.cmd : args;
  argv.insert(argv.end(), rest.begin(), rest.end());
  if (argv.empty()) {
    throw Error(fmt::format(
        "image '{}' has no ENTRYPOINT or CMD and the container gives no command", image_name));
  }
  return argv;
}

std::string expand_env_refs(const std::string& text,
                            const std::vector<std::pair<std::string, std::string>>& env) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$' || i + 1 == text.size()) {
      out += text[i];
    } else if (text[i + 1] == '$') {
      out += '$';
      ++i;
    } else if (size_t close = text.find(')', i); text[i + 1] == '(' && close != std::string::npos) {
      std::string name = text.substr(i + 2, close - i - 2);
      auto var =
          std::find_if(env.rbegin(), env.rend(), [&](const auto& e) { return e.first == name; });
      out += var != env.rend() ? var->second : text.substr(i, close - i + 1);
      i = close;
    } else {
      out += text[i];
    }
  }
  return out;
}

ContainerRuntime::ContainerRuntime(RuntimeKind kind, const std::string& run_dir) : kind_(kind) {
  std::string binary = in_path(to_string(kind));
  if (binary.empty()) {
    throw Error(
        fmt::format("--runtime {}: '{}' is not installed (scripts/setup.sh test "
                    "installs podman and runc)",
                    to_string(kind), to_string(kind)));
  }
  program_ = {binary};
  if (kind == RuntimeKind::podman) {
    // crun, podman's default, fails on hosts with hybrid cgroups; runc runs there. vfs is the
    // storage driver that works without kernel overlay support in every sandbox.
    if (!in_path("runc").empty()) {
      program_.insert(program_.end(), {"--runtime", "runc"});
    }
    program_.insert(program_.end(), {"--cgroup-manager", "cgroupfs", "--storage-driver", "vfs"});
    // No default ulimits: raising them fails in an unprivileged sandbox.
    std::string conf = run_dir + "/containers.conf";
    std::ofstream(conf) << "# written by zerodrop lab for its containers\n"
                           "[containers]\ndefault_ulimits = []\n";
    env_.emplace_back("CONTAINERS_CONF", conf);
  }
  label_ = fmt::format("zerodrop.lab={}-{}", ::getpid(),
                       std::filesystem::path(run_dir).filename().string());
}

std::vector<std::string> ContainerRuntime::command(const std::vector<std::string>& words) const {
  std::vector<std::string> argv = program_;
  argv.insert(argv.end(), words.begin(), words.end());
  return argv;
}

ImageConfig ContainerRuntime::inspect(const std::string& image) const {
  Captured c = run_captured(
      {.argv = command({"image", "inspect", "--format", "{{json .Config}}", image}), .env = env_});
  if (!c.status.success()) {
    std::string words = last_line(c.err);
    throw Error(fmt::format(
        "image '{}': {} image inspect: {} (the lab never pulls: load the "
        "image into {}'s local store first)",
        image, to_string(kind_), words.empty() ? c.status.describe() : words, to_string(kind_)));
  }
  ImageConfig config;
  nlohmann::json json = nlohmann::json::parse(c.out, nullptr, false);
  if (json.is_discarded() || !json.is_object()) {
    throw Error(fmt::format("image '{}': {} image inspect printed no configuration", image,
                            to_string(kind_)));
  }
  config.entrypoint = strings_of(json.value("Entrypoint", nlohmann::json()));
  config.cmd = strings_of(json.value("Cmd", nlohmann::json()));
  nlohmann::json signal = json.value("StopSignal", nlohmann::json());
  config.stop_signal = signal.is_string() ? signal.get<std::string>() : "";
  return config;
}

std::vector<std::string> ContainerRuntime::run_argv(const ContainerRun& run) const {
  std::vector<std::string> argv =
      command({"run", "--rm", "--pull", "never", "--sig-proxy=false", "--network", "host",
               "--label", label_, "--name", run.name});
  if (run.user) {
    argv.insert(argv.end(), {"--user", std::to_string(*run.user)});
  }
  for (const auto& [name, value] : run.env) {
    argv.insert(argv.end(), {"--env", name + "=" + value});
  }
  // The whole argv is given, so the image's own ENTRYPOINT and CMD play no further part. docker
  // takes the entrypoint as one path; podman reads a JSON array.
  std::string entrypoint = kind_ == RuntimeKind::docker
                               ? run.argv.at(0)
                               : nlohmann::json::array({run.argv.at(0)}).dump();
  argv.insert(argv.end(), {"--entrypoint", entrypoint, run.image});
  argv.insert(argv.end(), run.argv.begin() + 1, run.argv.end());
  return argv;
}

std::vector<std::string> ContainerRuntime::exec_prefix(const std::string& container) const {
  return command({"exec", container});
}

std::vector<std::string> ContainerRuntime::kill_argv(const std::string& container,
                                                     int signal) const {
  return command({"kill", "--signal", std::to_string(signal), container});
}

std::vector<std::string> ContainerRuntime::pid_argv(const std::string& container) const {
  return command({"inspect", "--format", "{{.State.Pid}}", container});
}

std::string bind_container(PodSpec& pod, const ContainerRuntime& runtime) {
  ContainerSpec& c = *pod.container;
  ImageConfig image = runtime.inspect(c.image);
  pod.command = container_argv(image, c.image, c.command, c.args);
  c.runtime = &runtime;
  std::string signal_source = "the manifest or --stop-signal";
  if (c.image_stop_signal && !image.stop_signal.empty()) {
    std::optional<int> signal = signal_from_name(image.stop_signal);
    if (!signal) {
      throw Error(fmt::format("image '{}': unknown STOPSIGNAL '{}'", c.image, image.stop_signal));
    }
    pod.stop_signal = *signal;
    signal_source = "the image's STOPSIGNAL";
  } else if (c.image_stop_signal) {
    signal_source = "the default: the image sets no STOPSIGNAL";
  }
  return fmt::format(
      "pods run image {} in {} containers (host network, each on its own "
      "address): {}; stop signal {} ({})",
      c.image, to_string(runtime.kind()), fmt::join(pod.command, " "),
      signal_full_name(pod.stop_signal), signal_source);
}

namespace {

// The sweeper's script: $1 the label, then the runtime's command line.
constexpr const char* kSweep =
    "label=$1; shift; cat >/dev/null\n"
    "ids=$(\"$@\" ps -aq --filter \"label=$label\") || exit 0\n"
    "[ -z \"$ids\" ] && exit 0\n"
    "\"$@\" kill $ids; \"$@\" rm -f $ids\n";

}  // namespace

ContainerSweeper::ContainerSweeper(const ContainerRuntime& runtime) {
  // Everything the child needs is built before fork(): only async-signal-safe calls after it.
  std::vector<std::string> args = {"/bin/sh", "-c", kSweep, "zerodrop-sweeper", runtime.label()};
  for (const std::string& word : runtime.command({})) {
    args.push_back(word);
  }
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    env.emplace_back(*e);
  }
  for (const auto& [name, value] : runtime.env()) {
    env.push_back(name + "=" + value);
  }
  std::vector<char*> argv, envp;
  for (std::string& a : args) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  for (std::string& e : env) {
    envp.push_back(e.data());
  }
  envp.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw Error(fmt::format("cannot start the container sweeper: pipe: {}", ::strerror(errno)));
  }
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setsid();  // no terminal's ^C, no death signal: it outlives a killed lab
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(fds[0], 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::syscall(SYS_close_range, 3, ~0U, 0);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(fds[0]);
  pipe_ = fds[1];
  if (pid_ < 0) {
    ::close(pipe_);
    throw Error(fmt::format("cannot start the container sweeper: fork: {}", ::strerror(errno)));
  }
}

ContainerSweeper::~ContainerSweeper() {
  ::close(pipe_);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

Containers start_containers(PodSpec& pod, const std::string& dir, Recorder& recorder) {
  Containers c;
  if (pod.container) {
    c.runtime = std::make_unique<ContainerRuntime>(pod.container->runtime_kind, dir);
    recorder.pod_event(record::EventKind::note, "", bind_container(pod, *c.runtime));
    c.sweeper = std::make_unique<ContainerSweeper>(*c.runtime);
  }
  return c;
}

}  // namespace zerodrop::lab
