#pragma once

// Which process ended each TCP connection, and how, from the kernel's own tracepoints. A client
// sees only a FIN or a reset; whether the pod's process closed the connection itself or its exit
// did, the kernel knows: sock:inet_sock_set_state names the task in whose context a socket left
// ESTABLISHED, and sched:sched_process_exit marks that task as exiting before its exit closes its
// files. Read with perf_event_open (no BPF needed), as root; the lab judges by timing without it.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace zerodrop::lab {

// One IPv4 TCP endpoint; the address in network byte order, as the kernel records it.
struct SocketAddress {
  uint32_t ip = 0;
  uint16_t port = 0;
  auto operator<=>(const SocketAddress&) const = default;
};

// How the process holding a socket ended its connection: the first transition out of
// ESTABLISHED (or CLOSE_WAIT) taken in a process's own context, not on a packet's arrival.
struct SocketClose {
  int64_t t_ns = 0;  // CLOCK_MONOTONIC
  int tid = 0;
  // The task was exiting (its sched_process_exit came first): its exit closed the socket, not a
  // close() of its own.
  bool by_exit = false;
  // Straight to CLOSE: an abortive close, the reset a close sends when data sat unread in the
  // socket (or SO_LINGER 0). Otherwise a FIN: all it had received, the process had read.
  bool reset = false;
};

class SocketTrace {
public:
  // Starts tracing every CPU, keeping the closes whose local address satisfies `keep` (the
  // pods'). Null, with `why_not` set, where the kernel does not allow it (not root, no tracefs).
  static std::unique_ptr<SocketTrace> start(std::function<bool(uint32_t ip)> keep,
                                            std::string* why_not);
  ~SocketTrace();
  SocketTrace(const SocketTrace&) = delete;
  SocketTrace& operator=(const SocketTrace&) = delete;

  // The latest close of the connection whose local end is `local` and remote end `peer`, if the
  // kernel recorded one by now (reads what the kernel buffered first). Thread-safe.
  std::optional<SocketClose> close_of(SocketAddress local, SocketAddress peer);
  // Samples the kernel dropped because a buffer was full (those closes are unknown).
  uint64_t lost() const;

  struct Buffer;  // one CPU's ring buffer (socket_trace.cc)

private:
  SocketTrace() = default;
  void drain();  // mutex_ held
  void take(const uint8_t* raw, uint32_t size, int64_t t_ns, int tid);

  std::function<bool(uint32_t)> keep_;
  uint16_t set_state_id_ = 0;
  uint16_t exit_id_ = 0;
  std::vector<std::unique_ptr<Buffer>> buffers_;
  mutable std::mutex mutex_;
  // By (local, peer): the closes of that pair of ends, oldest first.
  std::map<std::tuple<SocketAddress, SocketAddress>, std::vector<SocketClose>> closes_;
  std::unordered_map<int, int64_t> exits_;  // tid -> when it began to exit
  uint64_t lost_ = 0;
  // Empties the buffers every few milliseconds between queries, so that a busy host's other
  // connections do not fill them. Declared last: stopped and joined first.
  std::jthread drainer_;
};

}  // namespace zerodrop::lab
