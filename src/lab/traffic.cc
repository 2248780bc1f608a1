#include "lab/traffic.h"

#include <algorithm>

#include <fmt/format.h>

#include "lab/recording/recorder.h"

namespace zerodrop::lab {

// The router recorded the backend connection's fate before passing it on to the client, so a
// failure the client saw is already there; a connection still open has no time.
void join_report(const Router& router, const std::optional<ClientConnection>& connection,
                 const Recorder& recorder, record::RequestRecord& r) {
  if (connection) {
    if (r.backend.empty()) {
      r.backend = connection->pod;  // the app did not name itself (X-Pod-Name)
    }
    if (router.sees_backend_fates()) {
      r.backend_fate = connection->fate;
      if (connection->fate != record::BackendFate::open) {
        r.backend_fate_at = recorder.since_start(connection->fate_at);
      }
    }
  }
  router.join_report(r, connection);
}

Traffic::Traffic(load::Options options, const std::string& method, const std::string& path,
                 const std::vector<std::unique_ptr<Router>>& routers, Recorder& recorder)
    : options_(std::move(options)), routers_(routers), recorder_(recorder) {
  options_.targets.clear();
  for (const auto& router : routers_) {
    options_.targets.push_back({method,
                                fmt::format("http://{}:{}{}", router->host(), router->port(), path),
                                router->netns()});
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

// The bind time is the connection's, shared by every request sent on it.
void Traffic::join_bound(const Router& router, const std::optional<ClientConnection>& c,
                         record::RequestRecord& r) const {
  if (!c) {
    return;
  }
  r.bound = recorder_.since_start(c->bound_at);
  if (!router.sees_backend_fates()) {
    // The kernel's DNAT: its choice is read from conntrack a moment after it was made, but it was
    // made at the SYN, before this request was sent (or its connect failed). No proxy saw the
    // pod's side of the connection: the router's join_report() judges it from the kernel's.
    r.bound = std::min(*r.bound, r.sent.value_or(r.done));
  }
}

void Traffic::on_connection_event(const load::ConnectionEvent& c) {
  record::Event e;
  e.kind = c.kind;
  e.connection = c.facts;
  // The connection's own node: under nftables every node's Service has the same address and
  // port (and its own port space), so the port alone would name the wrong one.
  if (c.target < routers_.size() && routers_[c.target]->port() == c.server_port) {
    const Router& router = *routers_[c.target];
    e.router = router.name();
    if (std::optional<ClientConnection> joined = router.connection_of(c.facts.local_port)) {
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
    std::optional<ClientConnection> c =
        r.local_port != 0 ? router.connection_of(r.local_port) : std::nullopt;
    join_bound(router, c, r);
    join_report(router, c, recorder_, r);
  }
  ++requests_;
  failed_ += r.failed ? 1 : 0;
  recorder_.request(std::move(r));
}

}  // namespace zerodrop::lab
