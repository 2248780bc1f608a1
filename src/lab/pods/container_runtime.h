#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zerodrop::lab {

struct PodSpec;
class Recorder;

enum class RuntimeKind { podman, docker };

// "podman", "docker".
const char* to_string(RuntimeKind kind);
// "podman" or "docker"; throws Error naming `what` otherwise.
RuntimeKind parse_runtime(const std::string& text, const std::string& what);
// The runtime installed here, podman first. Throws Error saying what to install when none is.
RuntimeKind find_runtime();

// How an image runs by default: `podman image inspect`'s .Config.
struct ImageConfig {
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
  std::string stop_signal;  // STOPSIGNAL ("SIGQUIT", "3"), "" when the image sets none
};

// Kubernetes' rule for what a container runs: command replaces ENTRYPOINT (and drops CMD), args
// replace CMD. Throws Error naming `image` when the result is empty.
std::vector<std::string> container_argv(const ImageConfig& image, const std::string& image_name,
                                        const std::vector<std::string>& command,
                                        const std::vector<std::string>& args);

// Kubernetes' $(VAR) expansion of a container's command and args with its env; $$ escapes,
// unknown references stay as written.
std::string expand_env_refs(const std::string& text,
                            const std::vector<std::pair<std::string, std::string>>& env);

// What one container of a pod runs.
struct ContainerRun {
  std::string name;   // the container's name in the runtime
  std::string image;  // from the local store only: never pulled
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;
  std::optional<int64_t> user;  // securityContext.runAsUser
};

// A container runtime's command lines: podman (with the flags this kind of host needs and a
// containers.conf of the lab's own in the run folder) or docker. Every container it starts
// carries the run's label, by which ContainerSweeper finds what is left. Immutable once made.
class ContainerRuntime {
public:
  // Locates `kind`; for podman writes RUN_DIR/containers.conf. Throws Error when it is missing.
  ContainerRuntime(RuntimeKind kind, const std::string& run_dir);

  RuntimeKind kind() const { return kind_; }

  // "zerodrop.lab=PID-FOLDER": unique to this run.
  const std::string& label() const { return label_; }

  // The environment every runtime command needs on top of the inherited one (CONTAINERS_CONF).
  const std::vector<std::pair<std::string, std::string>>& env() const { return env_; }

  // The runtime's program and global flags followed by `words`.
  std::vector<std::string> command(const std::vector<std::string>& words) const;

  // Reads the image from the local store. Throws Error "image 'X': <the runtime's words>".
  ImageConfig inspect(const std::string& image) const;
  // `podman run` in the foreground for `run`: host network (the pod's own 127.x address), the
  // run's label, --rm, never a pull.
  std::vector<std::string> run_argv(const ContainerRun& run) const;
  std::vector<std::string> exec_prefix(const std::string& container) const;
  std::vector<std::string> kill_argv(const std::string& container, int signal) const;
  // The command that prints the container's PID 1 as the host sees it.
  std::vector<std::string> pid_argv(const std::string& container) const;

private:
  RuntimeKind kind_;
  std::vector<std::string> program_;  // the binary and its global flags
  std::vector<std::pair<std::string, std::string>> env_;
  std::string label_;
};

// Makes `pod` (whose `container` is set) run in containers of `runtime`: its argv by Kubernetes'
// rules from the image and, where nothing else set one, the image's STOPSIGNAL. Returns what the
// record notes. Throws Error naming the image (not in the local store, no command, bad signal).
std::string bind_container(PodSpec& pod, const ContainerRuntime& runtime);

// Removes every container of a run when the run ends, even when the lab is killed with SIGKILL:
// a process of its own session (no death signal, so it outlives the lab) waits for EOF on a pipe
// only the lab holds, then runs `ps -aq --filter label=…` and `rm -f`. A container started with
// --rm that exits is removed by its conmon; one still running when the lab dies is not, hence
// this keeper. The destructor closes the pipe and waits for the sweep.
class ContainerSweeper {
public:
  explicit ContainerSweeper(const ContainerRuntime& runtime);
  ~ContainerSweeper();
  ContainerSweeper(const ContainerSweeper&) = delete;
  ContainerSweeper& operator=(const ContainerSweeper&) = delete;

private:
  pid_t pid_ = -1;
  int pipe_ = -1;
};

// For pods of an image: the runtime, bound to the pods (bind_container, noted in the record),
// and the sweeper of their containers. Both empty for pods of a command.
struct Containers {
  std::unique_ptr<ContainerRuntime> runtime;
  std::unique_ptr<ContainerSweeper> sweeper;
};

// Starts them for `pod` when it runs an image (files in `dir`). Throws Error as bind_container.
Containers start_containers(PodSpec& pod, const std::string& dir, Recorder& recorder);

}  // namespace zerodrop::lab
