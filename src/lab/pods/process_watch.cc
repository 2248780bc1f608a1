// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "lab/pods/process_watch.h"

#include <unistd.h>

#include <unordered_map>

#include <boost/asio.hpp>
#include <fmt/format.h>

#include "base/process_events.h"
#include "lab/recording/recorder.h"

namespace zerodrop::lab {

namespace asio = boost::asio;

struct ProcessWatch::Impl {
  struct Tracked {
    std::string pod;
    std::string name;
    bool main = false;
  };

  Impl(asio::io_context& io, Recorder& r, ProcessEvents e)
      : rec(r), events(std::move(e)), watch(io, ::dup(events.fd())) {}

  void arm();
  void handle(const ProcessEvent& e);
  void exited(const ProcessEvent& e, const Tracked& process);

  Recorder& rec;
  ProcessEvents events;
  asio::posix::stream_descriptor watch;
  std::unordered_map<pid_t, Tracked> tracked;
  bool lost_noted = false;
};

void ProcessWatch::Impl::arm() {
  watch.async_wait(asio::posix::descriptor_base::wait_read, [this](boost::system::error_code ec) {
    if (ec) {
      return;
    }
    bool lost = false;
    for (const ProcessEvent& e : events.read(lost)) {
      handle(e);
    }
    if (lost && !lost_noted) {
      lost_noted = true;
      rec.pod_event(record::EventKind::note, "",
                    "the kernel dropped process events (its queue overflowed): some exits of "
                    "the pods' processes may be missing");
    }
    arm();
  });
}

void ProcessWatch::Impl::handle(const ProcessEvent& e) {
  if (e.kind == ProcessEvent::Kind::fork) {
    auto parent = tracked.find(e.parent);
    if (parent != tracked.end()) {
      Tracked child{parent->second.pod, parent->second.name, false};  // before a rehash
      tracked[e.pid] = std::move(child);
    }
    return;
  }
  auto it = tracked.find(e.pid);
  if (it == tracked.end()) {
    return;
  }
  if (e.kind == ProcessEvent::Kind::exec) {
    std::string name = process_name(e.pid);
    it->second.name = name.empty() ? it->second.name : name;
  } else if (e.kind == ProcessEvent::Kind::comm) {
    it->second.name = e.comm;
  } else {
    exited(e, it->second);
    tracked.erase(it);
  }
}

void ProcessWatch::Impl::exited(const ProcessEvent& e, const Tracked& process) {
  if (process.main) {
    return;  // the pod records its main process's exit itself
  }
  record::Event event;
  event.kind = record::EventKind::process_exited;
  event.pod = process.pod;
  event.exit_code = e.status.exit_code;
  event.signal = e.status.signal;
  event.detail = fmt::format("pid {} ({}) {}", e.pid, process.name, e.status.describe());
  rec.event_at(e.t, std::move(event));
}

std::unique_ptr<ProcessWatch> ProcessWatch::start(asio::io_context& io, Recorder& recorder,
                                                  std::string& why) {
  std::optional<ProcessEvents> events = ProcessEvents::open(why);
  if (!events) {
    return nullptr;
  }
  auto impl = std::make_unique<Impl>(io, recorder, std::move(*events));
  impl->arm();
  return std::unique_ptr<ProcessWatch>(new ProcessWatch(std::move(impl)));
}

ProcessWatch::ProcessWatch(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ProcessWatch::~ProcessWatch() = default;

void ProcessWatch::add(pid_t pid, const std::string& pod) {
  impl_->tracked[pid] = {pod, process_name(pid), true};
}

}  // namespace zerodrop::lab
