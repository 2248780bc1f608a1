#include "lab/traffic.h"

#include <fmt/format.h>

#include "lab/recorder.h"

namespace zerodrop::lab {

Traffic::Traffic(load::Options options, const std::string& method, const std::string& path,
                 const std::vector<std::unique_ptr<Router>>& routers, Recorder& recorder)
    : options_(std::move(options)), routers_(routers), recorder_(recorder) {
  options_.targets.clear();
  for (const auto& router : routers_) {
    options_.targets.push_back(
        {method, fmt::format("http://127.0.0.1:{}{}", router->port(), path)});
  }
  options_.duration = std::chrono::hours(24);  // the lab ends the load through `stop`
}

Traffic::~Traffic() {
  stop();
}

void Traffic::start() {
  load::Hooks hooks;
  hooks.on_record = [this](const record::RequestRecord& r) {
    on_record(r);
  };
  hooks.stop = &stop_;
  hooks.on_connection_event = [this](const load::ConnectionEvent& e) {
    on_connection_event(e);
  };
  // The engine's clock starts once its workers are ready: its t = 0 is placed on the recorder's
  // timeline exactly, so a request and a pod event compare to the microsecond.
  hooks.on_start = [this](std::chrono::steady_clock::time_point start) {
    origin_ = recorder_.since_start(start);
  };
  thread_ = std::thread([this, hooks] {
    try {
      summary_ = load::run(options_, hooks);
    } catch (...) {
      error_ = std::current_exception();
    }
    done_ = true;
  });
}

load::Summary Traffic::stop() {
  stop_ = true;
  if (thread_.joinable()) {
    thread_.join();
  }
  if (error_) {
    std::exception_ptr error = std::exchange(error_, nullptr);
    std::rethrow_exception(error);
  }
  return summary_;
}

// The router recorded the backend connection's fate before passing it on to the client, so a
// failure the client saw is already there; a connection still open has no time. The bind time is
// the connection's, shared by every request sent on it.
void Traffic::join_connection(const Router& router, record::RequestRecord& r) const {
  std::optional<ClientConnection> c = router.connection_of(r.local_port);
  if (!c) {
    return;
  }
  if (r.backend.empty()) {
    r.backend = c->pod;  // the app did not name itself (X-Pod-Name)
  }
  r.bound = recorder_.since_start(c->bound_at);
  r.backend_fate = c->fate;
  if (c->fate != record::BackendFate::open) {
    r.backend_fate_at = recorder_.since_start(c->fate_at);
  }
}

void Traffic::on_connection_event(const load::ConnectionEvent& c) {
  record::Event e;
  e.kind = c.kind;
  e.connection = c.facts;
  for (const auto& router : routers_) {
    if (router->port() != c.server_port) {
      continue;
    }
    e.router = router->name();
    if (std::optional<ClientConnection> joined = router->connection_of(c.facts.local_port)) {
      e.pod = joined->pod;
    }
  }
  if (e.connection->goaway) {
    e.connection->goaway->t += origin_;  // onto the recorder's timeline, as the event
  }
  const record::ConnectionFacts& f = *e.connection;
  e.detail = c.kind == record::EventKind::goaway_received
                 ? fmt::format("GOAWAY({}, {}) on connection {}", f.goaway->last_stream_id,
                               record::h2_error_name(f.goaway->error), f.conn)
                 : fmt::format("connection {} {} {} GOAWAY, {} stream(s) open", f.conn,
                               record::to_string(f.closed), f.goaway ? "after" : "without",
                               f.open_streams);
  recorder_.event_at(recorder_.start() + origin_ + c.t, std::move(e));
}

void Traffic::on_record(const record::RequestRecord& original) {
  record::RequestRecord r = original;
  const record::Micros origin = origin_;
  r.intended += origin;
  r.done += origin;
  if (r.sent) {
    *r.sent += origin;
  }
  if (r.first_byte) {
    *r.first_byte += origin;
  }
  if (r.target < routers_.size()) {
    const Router& router = *routers_[r.target];
    r.router = router.name();
    if (r.local_port != 0) {
      join_connection(router, r);
    }
    router.join_report(r);
  }
  ++requests_;
  failed_ += r.failed ? 1 : 0;
  recorder_.request(std::move(r));
}

}  // namespace zerodrop::lab
