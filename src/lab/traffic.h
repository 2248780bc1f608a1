#pragma once

#include <atomic>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "lab/routers/router.h"
#include "load/load.h"
#include "record/run_record.h"

namespace zerodrop::lab {

class Recorder;

// Joins `request` to what its `router` knew of it: the client connection it carried
// (`connection`: the pod, when the app did not name itself, and from a router that sees it the
// backend connection's fate), then what the router itself reported (Router::join_report). The
// lab's own load and the verify agents' requests are joined by this one rule.
void join_report(const Router& router, const std::optional<ClientConnection>& connection,
                 const Recorder& recorder, record::RequestRecord& request);

// The load engine on its own thread, one target per router. Each record is moved onto the
// recorder's timeline, gets its router's name, and (l4) the backend the router chose for its
// connection, found by the client's source port. HTTP/2 connection events become events of the
// pod joined the same way.
class Traffic {
public:
  // `routers` must outlive this object. `options.targets` is replaced.
  Traffic(load::Options options, const std::string& method, const std::string& path,
          const std::vector<std::unique_ptr<Router>>& routers, Recorder& recorder);
  ~Traffic();

  void start();
  // Ends the load (if running) and returns its summary; rethrows the engine's Error.
  load::Summary stop();

  bool finished() const { return done_; }

  uint64_t requests() const { return requests_; }

  uint64_t failed() const { return failed_; }

private:
  void on_record(const record::RequestRecord& request);
  void join_bound(const Router& router, const std::optional<ClientConnection>& connection,
                  record::RequestRecord& request) const;
  void on_connection_event(const load::ConnectionEvent& event);

  load::Options options_;
  const std::vector<std::unique_ptr<Router>>& routers_;
  Recorder& recorder_;
  // The load engine's t = 0 on the recorder's timeline; set on the engine's thread before its
  // first record (Hooks::on_start).
  record::Micros origin_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> failed_{0};
  std::thread thread_;
  std::exception_ptr error_;
  load::Summary summary_;
};

}  // namespace zerodrop::lab
