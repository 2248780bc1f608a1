#include "lab/routers/socket_trace.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>

#include <fmt/format.h>

namespace zerodrop::lab {
namespace {

// Where the kernel exposes its tracepoints' ids; mounted by systemd on most hosts.
constexpr const char* kTraceFs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

// The fixed layout of sock:inet_sock_set_state's record (its format file, unchanged since
// Linux 4.16) and of sched:sched_process_exit's, after the 8-byte common header.
constexpr size_t kCommonFlags = 2;
constexpr size_t kOldState = 16;
constexpr size_t kNewState = 20;
constexpr size_t kSport = 24;
constexpr size_t kDport = 26;
constexpr size_t kFamily = 28;
constexpr size_t kProtocol = 30;
constexpr size_t kSaddr = 32;
constexpr size_t kDaddr = 36;
constexpr size_t kSetStateSize = 40;

// common_flags bits (TRACE_FLAG_*, include/linux/trace_events.h): the record was taken in an
// interrupt, on a packet's arrival, not in a process's own call. 0x20 is PREEMPT_RESCHED, set
// in a process's own call whenever the scheduler wants the CPU back (often on a loaded host):
// counting it as an interrupt lost closes at random.
constexpr uint8_t kInInterrupt = 0x08 | 0x10 | 0x40;  // hardirq, softirq, NMI

enum TcpState { established = 1, fin_wait1 = 4, close_state = 7, close_wait = 8, last_ack = 9 };

constexpr size_t kDataPages = 64;  // 256 KiB per CPU

template <typename T>
T field(const uint8_t* raw, size_t offset) {
  T value;
  std::memcpy(&value, raw + offset, sizeof value);
  return value;
}

std::optional<uint16_t> tracepoint_id(const std::string& root, const std::string& event) {
  std::ifstream in(root + "/events/" + event + "/id");
  int id = 0;
  if (!(in >> id) || id <= 0 || id > 0xffff) {
    return std::nullopt;
  }
  return static_cast<uint16_t>(id);
}

// The tracefs root that lists `event`, mounting tracefs at its usual place when nothing is.
std::optional<std::string> tracefs_with(const std::string& event) {
  for (const char* root : kTraceFs) {
    if (tracepoint_id(root, event)) {
      return root;
    }
  }
  if (::mount("nodev", kTraceFs[0], "tracefs", 0, nullptr) == 0
      && tracepoint_id(kTraceFs[0], event)) {
    return kTraceFs[0];
  }
  return std::nullopt;
}

int open_tracepoint(uint16_t id, int cpu) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = id;
  attr.sample_period = 1;
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  attr.disabled = 1;
  return static_cast<int>(::syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

}  // namespace

// One CPU's perf ring buffer, shared by both tracepoints (PERF_EVENT_IOC_SET_OUTPUT).
struct SocketTrace::Buffer {
  std::vector<int> fds;
  void* map = MAP_FAILED;
  size_t map_size = 0;

  ~Buffer() {
    for (int fd : fds) {
      ::ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    }
    if (map != MAP_FAILED) {
      ::munmap(map, map_size);
    }
    for (int fd : fds) {
      ::close(fd);
    }
  }

  perf_event_mmap_page* page() const { return static_cast<perf_event_mmap_page*>(map); }

  uint8_t* data() const { return static_cast<uint8_t*>(map) + ::sysconf(_SC_PAGESIZE); }
};

std::unique_ptr<SocketTrace> SocketTrace::start(std::function<bool(uint32_t ip)> keep,
                                                std::string* why_not) {
  if (::geteuid() != 0) {
    *why_not = "not root";
    return nullptr;
  }
  std::optional<std::string> root = tracefs_with("sock/inet_sock_set_state");
  std::optional<uint16_t> set_state =
      root ? tracepoint_id(*root, "sock/inet_sock_set_state") : std::nullopt;
  std::optional<uint16_t> exit =
      root ? tracepoint_id(*root, "sched/sched_process_exit") : std::nullopt;
  if (!set_state || !exit) {
    *why_not = "no tracefs with sock:inet_sock_set_state and sched:sched_process_exit";
    return nullptr;
  }
  std::unique_ptr<SocketTrace> trace(new SocketTrace());
  trace->keep_ = std::move(keep);
  trace->set_state_id_ = *set_state;
  trace->exit_id_ = *exit;
  long cpus = ::sysconf(_SC_NPROCESSORS_CONF);
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  for (int cpu = 0; cpu < cpus; ++cpu) {
    auto buffer = std::make_unique<Buffer>();
    for (uint16_t id : {*set_state, *exit}) {
      int fd = open_tracepoint(id, cpu);
      if (fd < 0) {
        if (errno == ENODEV || errno == EINVAL) {
          break;  // an offline CPU
        }
        *why_not = fmt::format("perf_event_open: {}", std::strerror(errno));
        return nullptr;
      }
      buffer->fds.push_back(fd);
    }
    if (buffer->fds.size() != 2) {
      continue;
    }
    buffer->map_size = (kDataPages + 1) * page;
    buffer->map =
        ::mmap(nullptr, buffer->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, buffer->fds[0], 0);
    if (buffer->map == MAP_FAILED
        || ::ioctl(buffer->fds[1], PERF_EVENT_IOC_SET_OUTPUT, buffer->fds[0]) != 0) {
      *why_not = fmt::format("perf ring buffer: {}", std::strerror(errno));
      return nullptr;
    }
    // Only IPv4 TCP sockets leaving ESTABLISHED or CLOSE_WAIT: a few records per connection.
    const char* filter =
        "family == 2 && protocol == 6 && ((oldstate == 1 && newstate != 8) || oldstate == 8)";
    ::ioctl(buffer->fds[0], PERF_EVENT_IOC_SET_FILTER, filter);  // best effort: take() checks
    for (int fd : buffer->fds) {
      ::ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    }
    trace->buffers_.push_back(std::move(buffer));
  }
  if (trace->buffers_.empty()) {
    *why_not = "no CPU to trace";
    return nullptr;
  }
  trace->drainer_ = std::jthread([t = trace.get()](std::stop_token stop) {
    while (!stop.stop_requested()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::lock_guard lock(t->mutex_);
      t->drain();
    }
  });
  return trace;
}

SocketTrace::~SocketTrace() = default;

void SocketTrace::drain() {
  for (const std::unique_ptr<Buffer>& b : buffers_) {
    perf_event_mmap_page* page = b->page();
    uint64_t head = std::atomic_ref<__u64>(page->data_head).load(std::memory_order_acquire);
    uint64_t tail = page->data_tail;
    const uint64_t size = kDataPages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    std::vector<uint8_t> record;
    while (tail < head) {
      perf_event_header header;
      for (size_t i = 0; i < sizeof header; ++i) {
        reinterpret_cast<uint8_t*>(&header)[i] = b->data()[(tail + i) % size];
      }
      if (header.size < sizeof header || tail + header.size > head) {
        break;
      }
      record.resize(header.size);
      for (size_t i = 0; i < header.size; ++i) {
        record[i] = b->data()[(tail + i) % size];
      }
      tail += header.size;
      const uint8_t* p = record.data() + sizeof header;
      if (header.type == PERF_RECORD_LOST && header.size >= sizeof header + 16) {
        lost_ += field<uint64_t>(p, 8);
      } else if (header.type == PERF_RECORD_SAMPLE && header.size >= sizeof header + 20) {
        // PERF_SAMPLE_TID (pid, tid), PERF_SAMPLE_TIME, PERF_SAMPLE_RAW (size, data).
        int tid = field<int32_t>(p, 4);
        auto t_ns = static_cast<int64_t>(field<uint64_t>(p, 8));
        uint32_t raw_size = field<uint32_t>(p, 16);
        if (sizeof header + 20 + raw_size <= header.size) {
          take(p + 20, raw_size, t_ns, tid);
        }
      }
    }
    std::atomic_ref<__u64>(page->data_tail).store(tail, std::memory_order_release);
  }
}

void SocketTrace::take(const uint8_t* raw, uint32_t size, int64_t t_ns, int tid) {
  if (size < 8) {
    return;
  }
  uint16_t type = field<uint16_t>(raw, 0);
  if (type == exit_id_) {
    exits_[tid] = t_ns;
    return;
  }
  if (type != set_state_id_ || size < kSetStateSize || (raw[kCommonFlags] & kInInterrupt) != 0
      || field<uint16_t>(raw, kFamily) != 2 || field<uint16_t>(raw, kProtocol) != 6) {
    return;
  }
  int from = field<int32_t>(raw, kOldState);
  int to = field<int32_t>(raw, kNewState);
  bool closing = (from == established && (to == fin_wait1 || to == close_state))
                 || (from == close_wait && (to == last_ack || to == close_state));
  uint32_t local_ip = field<uint32_t>(raw, kSaddr);
  if (!closing || !keep_(local_ip)) {
    return;
  }
  // The tracepoint's ports are in host order (the kernel converts them).
  SocketAddress local{local_ip, field<uint16_t>(raw, kSport)};
  SocketAddress peer{field<uint32_t>(raw, kDaddr), field<uint16_t>(raw, kDport)};
  closes_[{local, peer}].push_back({t_ns, tid, false, to == close_state});
}

std::optional<SocketClose> SocketTrace::close_of(SocketAddress local, SocketAddress peer) {
  std::lock_guard lock(mutex_);
  drain();
  auto it = closes_.find({local, peer});
  if (it == closes_.end() || it->second.empty()) {
    return std::nullopt;
  }
  SocketClose close = it->second.back();
  auto exit = exits_.find(close.tid);
  close.by_exit = exit != exits_.end() && exit->second <= close.t_ns;
  return close;
}

uint64_t SocketTrace::lost() const {
  std::lock_guard lock(mutex_);
  return lost_;
}

}  // namespace zerodrop::lab
