#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace zerodrop::lab {

class Recorder;

// Every process of every pod, from the kernel's process events: a pod's main process and all it
// forks, at any depth. Records each exit of a process other than the main one (whose exit the
// pod records) as `process_exited` at the kernel's time stamp, with its pid, name and status.
// Control thread only.
class ProcessWatch {
public:
  // Starts watching on `io`'s thread; nullptr with `why` set when the host gives no process
  // events (they need CAP_NET_ADMIN).
  static std::unique_ptr<ProcessWatch> start(boost::asio::io_context& io, Recorder& recorder,
                                             std::string& why);
  ~ProcessWatch();
  ProcessWatch(const ProcessWatch&) = delete;
  ProcessWatch& operator=(const ProcessWatch&) = delete;

  // Tracks `pid`, a pod's main process spawned just now, and every process it forks, as `pod`'s.
  // Forks that happened before this call are still caught: they wait in the kernel's queue.
  void add(pid_t pid, const std::string& pod);

private:
  struct Impl;
  explicit ProcessWatch(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerodrop::lab
