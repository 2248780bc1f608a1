#include "base/process_events.h"

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

namespace zerodrop {
namespace {

ExitStatus exit_status(uint32_t wait_status) {
  ExitStatus s;
  int status = static_cast<int>(wait_status);
  if (WIFSIGNALED(status)) {
    s.signal = WTERMSIG(status);
  } else {
    s.exit_code = WEXITSTATUS(status);
  }
  return s;
}

std::optional<ProcessEvent> parse(const proc_event& e) {
  ProcessEvent out;
  out.t = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(e.timestamp_ns));
  switch (e.what) {
    case proc_event::PROC_EVENT_FORK:
      if (e.event_data.fork.child_pid != e.event_data.fork.child_tgid) {
        return std::nullopt;  // a thread
      }
      out.kind = ProcessEvent::Kind::fork;
      out.pid = e.event_data.fork.child_tgid;
      out.parent = e.event_data.fork.parent_tgid;
      return out;
    case proc_event::PROC_EVENT_EXEC:
      out.kind = ProcessEvent::Kind::exec;
      out.pid = e.event_data.exec.process_tgid;
      return out;
    case proc_event::PROC_EVENT_COMM:
      out.kind = ProcessEvent::Kind::comm;
      out.pid = e.event_data.comm.process_tgid;
      out.comm.assign(e.event_data.comm.comm,
                      ::strnlen(e.event_data.comm.comm, sizeof e.event_data.comm.comm));
      return out;
    case proc_event::PROC_EVENT_EXIT:
      if (e.event_data.exit.process_pid != e.event_data.exit.process_tgid) {
        return std::nullopt;  // a thread
      }
      out.kind = ProcessEvent::Kind::exit;
      out.pid = e.event_data.exit.process_tgid;
      out.status = exit_status(e.event_data.exit.exit_code);
      return out;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<ProcessEvents> ProcessEvents::open(std::string& why) {
  int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
  if (fd < 0) {
    why = std::string("netlink connector: ") + ::strerror(errno);
    return std::nullopt;
  }
  ProcessEvents events(fd);
  // Every fork and exit of the host arrives here: a deep queue rides out a busy build machine.
  int buffer = 8 << 20;
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer) != 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
  }
  sockaddr_nl address{};
  address.nl_family = AF_NETLINK;
  address.nl_groups = CN_IDX_PROC;
  // The subscription: a netlink header, a connector header, the operation, back to back.
  constexpr size_t kSize = NLMSG_LENGTH(sizeof(cn_msg) + sizeof(proc_cn_mcast_op));
  alignas(nlmsghdr) std::array<char, kSize> request{};
  auto* header = reinterpret_cast<nlmsghdr*>(request.data());
  header->nlmsg_len = kSize;
  header->nlmsg_type = NLMSG_DONE;
  header->nlmsg_pid = 0;
  auto* message = static_cast<cn_msg*>(NLMSG_DATA(header));
  message->id = {CN_IDX_PROC, CN_VAL_PROC};
  message->len = sizeof(proc_cn_mcast_op);
  proc_cn_mcast_op op = PROC_CN_MCAST_LISTEN;
  std::memcpy(message->data, &op, sizeof op);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0
      || ::send(fd, request.data(), kSize, 0) != static_cast<ssize_t>(kSize)) {
    why = std::string("process events: ") + ::strerror(errno);
    return std::nullopt;
  }
  return events;
}

ProcessEvents::ProcessEvents(ProcessEvents&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

ProcessEvents& ProcessEvents::operator=(ProcessEvents&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

ProcessEvents::~ProcessEvents() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

std::vector<ProcessEvent> ProcessEvents::read(bool& lost) {
  std::vector<ProcessEvent> out;
  alignas(nlmsghdr) std::array<char, 16384> buffer;
  for (;;) {
    ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && errno == ENOBUFS) {
      lost = true;
      continue;
    }
    if (n <= 0) {
      break;
    }
    size_t left = static_cast<size_t>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(buffer.data()); NLMSG_OK(h, left);
         h = NLMSG_NEXT(h, left)) {
      auto* message = static_cast<cn_msg*>(NLMSG_DATA(h));
      if (h->nlmsg_len < NLMSG_LENGTH(sizeof(cn_msg) + sizeof(proc_event))
          || message->id.idx != CN_IDX_PROC) {
        continue;
      }
      proc_event event;
      std::memcpy(&event, message->data, sizeof event);
      if (auto parsed = parse(event)) {
        out.push_back(std::move(*parsed));
      }
    }
  }
  return out;
}

std::string process_name(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

}  // namespace zerodrop
