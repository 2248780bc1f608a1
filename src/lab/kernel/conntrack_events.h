#pragma once

// Conntrack's NEW events, read straight from netlink (NETLINK_NETFILTER, group
// NF_NETLINK_CONNTRACK_NEW), with no library: the lab's binary is static and Debian ships no
// static libnetfilter-conntrack.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "lab/routers/router.h"

namespace zerodrop::lab {

// A new TCP/IPv4 connection as conntrack reports it: its original direction (the client's
// source port, the address and port it dialled), the reply's source (where DNAT sent it) and the
// reply's destination (the client as the pod sees it, after any source NAT).
struct NewConnection {
  uint16_t client_port = 0;
  uint32_t dialled = 0;  // network byte order
  uint16_t dialled_port = 0;
  uint32_t answered_by = 0;  // network byte order
  uint16_t answered_by_port = 0;
  uint32_t replied_to = 0;  // network byte order
  uint16_t replied_to_port = 0;
};

// Calls `on` for each TCP/IPv4 conntrack event in one netlink datagram; skips everything else
// (other protocols, malformed or truncated messages).
void parse_conntrack_events(const char* data, size_t size,
                            const std::function<void(const NewConnection&)>& on);

// A conntrack event listener in the calling thread's network namespace. Not thread-safe.
class ConntrackEvents {
public:
  // Throws Error naming `dataplane` and the cause when the kernel refuses (no conntrack netlink,
  // no root).
  explicit ConntrackEvents(Dataplane dataplane);
  ~ConntrackEvents();
  ConntrackEvents(const ConntrackEvents&) = delete;
  ConntrackEvents& operator=(const ConntrackEvents&) = delete;

  int fd() const { return fd_; }

  // Reads every queued event without blocking. False when the kernel dropped events since the
  // last call (its buffer overflowed: ENOBUFS).
  bool drain(const std::function<void(const NewConnection&)>& on);

private:
  int fd_ = -1;
};

}  // namespace zerodrop::lab
