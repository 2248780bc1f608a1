#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/subprocess.h"
#include "lab/pods/pod.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace zerodrop::lab {

struct CheckTarget;

// Why `signal` will do nothing to `pid`, a pod's PID 1 (its command), nullopt when it acts: in a
// PID namespace the kernel drops a signal PID 1 has no handler for; anywhere, an ignored one.
std::optional<std::string> dropped_by_kernel(pid_t pid, Isolation isolation, int signal);

// The container behind a pod of an image (internal to Pod): its name in the runtime, one per
// start; its PID 1 as the host sees it once known, and when that died. Every runtime command but
// the end-of-run kill runs in the background. Control thread only.
class PodContainer {
public:
  PodContainer(boost::asio::io_context& io, Recorder& recorder, const PodSpec& spec,
               std::string pod, std::string log);
  ~PodContainer();
  PodContainer(const PodContainer&) = delete;
  PodContainer& operator=(const PodContainer&) = delete;

  // The runtime's `run` of a new container for `argv` ($(VAR) expanded from `target.env`);
  // points `target`'s exec checks into it.
  SpawnOptions start(std::vector<std::string> argv, CheckTarget& target);

  const std::string& name() const { return name_; }

  // Once the pod is Ready: asks the runtime for PID 1, then watches it die (a pidfd).
  void find_pid();
  // `signal` to the container's PID 1 once its pid is known (SIGKILL and an unknown pid: through
  // the runtime, `kill --signal`); a failure while it runs becomes a note.
  void signal(int signal);
  // What dropped_by_kernel says of PID 1; nullopt while PID 1 is unknown.
  std::optional<std::string> dropped(int signal) const;
  // The end of the run: SIGKILL through the runtime, then `client`'s exit (bounded; a hung
  // client is killed and the sweeper removes what it leaves).
  void kill_now(Subprocess& client);
  // When PID 1 died, if seen; cleared by the next start.
  std::optional<Clock::time_point> died_at() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string name_;
};

}  // namespace zerodrop::lab
