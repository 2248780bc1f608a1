#include "load/worker.h"

#include <algorithm>
#include <cmath>

#include <boost/asio/post.hpp>

namespace zerodrop::load {
namespace {

namespace asio = boost::asio;
using std::chrono::nanoseconds;

record::Micros since(TimePoint t, TimePoint start) {
  return std::chrono::duration_cast<record::Micros>(t - start);
}

// Timeouts are checked by one periodic sweep over the connections rather than a timer per
// request (arming and cancelling a timer per request costs more than the request's parsing).
nanoseconds sweep_period(const Options& options) {
  nanoseconds shortest = std::min({options.timeout, options.connect_timeout, options.interval});
  return std::clamp<nanoseconds>(shortest / 10, std::chrono::milliseconds(1),
                                 std::chrono::milliseconds(50));
}

}  // namespace

Worker::Worker(RunContext& run, uint32_t index, uint32_t count, uint32_t connections)
    : run_(run),
      index_(index),
      count_(count),
      // One thread runs this context and nothing crosses threads: no locking inside Asio.
      io_(BOOST_ASIO_CONCURRENCY_HINT_UNSAFE),
      pacer_(io_),
      sweep_(io_),
      idle_(run.plan.endpoints.size()),
      sweep_period_(sweep_period(run.options)) {
  for (const PlanEndpoint& e : run.plan.endpoints) {
    endpoints_.emplace_back(asio::ip::make_address(e.address), e.port);
  }
  for (uint32_t i = 0; i < connections; ++i) {
    connections_.push_back(std::make_unique<Connection>(*this, run.plan, io_));
  }
  for (auto it = connections_.rbegin(); it != connections_.rend(); ++it) {
    closed_.push_back(it->get());
    (*it)->in_closed_list = true;
  }
  if (run.options.max_requests != 0) {
    limit_ = run.options.max_requests / count + (index < run.options.max_requests % count ? 1 : 0);
  }
}

Worker::~Worker() = default;

void Worker::run() {
  asio::post(io_, [this] {
    TimePoint now = std::chrono::steady_clock::now();
    last_interval_ = run_.start;
    next_interval_ = run_.start + run_.options.interval;
    sweep();
    if (run_.options.rate > 0) {
      pace();
    } else {
      dispatch(now);
      arm_pacer(run_.end);
    }
  });
  io_.run();
}

TimePoint Worker::intended(uint64_t local) const {
  double seconds = static_cast<double>(global_index(local)) / run_.options.rate;
  return run_.start + nanoseconds(std::llround(seconds * 1e9));
}

bool Worker::next_request(TimePoint now, Request& out) const {
  if (ended_ || dispatched_ >= limit_ || (run_.options.rate > 0 && dispatched_ >= due_)) {
    return false;
  }
  uint64_t k = global_index(dispatched_);
  out.seq = k;
  out.target = static_cast<uint32_t>(k % run_.plan.targets.size());
  out.intended = run_.options.rate > 0 ? intended(dispatched_) : now;
  return true;
}

// A kept-alive connection to the endpoint, else a closed slot, else an idle connection to another
// endpoint, closed to free its slot.
Connection* Worker::pick(uint32_t endpoint) {
  auto take_idle = [](std::vector<Connection*>& list) -> Connection* {
    while (!list.empty()) {
      Connection* c = list.back();
      list.pop_back();
      c->in_idle_list = false;
      if (c->state() == Connection::State::idle) {
        return c;
      }
    }
    return nullptr;
  };
  if (Connection* c = take_idle(idle_[endpoint])) {
    return c;
  }
  while (!closed_.empty()) {
    Connection* c = closed_.back();
    closed_.pop_back();
    c->in_closed_list = false;
    if (c->state() == Connection::State::closed) {
      return c;
    }
  }
  for (auto& list : idle_) {
    if (Connection* c = take_idle(list)) {
      c->close();
      return c;
    }
  }
  return nullptr;
}

void Worker::dispatch(TimePoint now) {
  Request request;
  while (next_request(now, request)) {
    Connection* c = pick(run_.plan.targets[request.target].endpoint);
    if (c == nullptr) {
      return;
    }
    ++dispatched_;
    ++tally_.sent;
    ++active_;
    c->start(request, now);
  }
}

// Open loop: marks the requests whose intended time has come as due, sends what the connections
// allow, counts the rest late (they go out as soon as a connection frees up), and sleeps until
// the next intended time.
void Worker::pace() {
  TimePoint now = std::chrono::steady_clock::now();
  if (now >= run_.end) {
    end_sending(now);
    return;
  }
  while (due_ < limit_ && intended(due_) <= now) {
    ++due_;
  }
  dispatch(now);
  if (dispatched_ < due_) {
    tally_.late += due_ - std::max(dispatched_, late_mark_);
    late_mark_ = due_;
  }
  arm_pacer(due_ < limit_ ? std::min(intended(due_), run_.end) : run_.end);
}

void Worker::arm_pacer(TimePoint at) {
  pacer_.expires_at(at);
  pacer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || ended_) {
      return;
    }
    run_.options.rate > 0 ? pace() : end_sending(std::chrono::steady_clock::now());
  });
}

void Worker::sweep() {
  TimePoint now = std::chrono::steady_clock::now();
  if (!ended_ && run_.hooks.stop != nullptr && run_.hooks.stop->load(std::memory_order_relaxed)) {
    interrupted_ = true;
    end_sending(now);
  }
  for (auto& c : connections_) {
    c->expire_if_due(now);
  }
  if (index_ == 0 && run_.hooks.on_interval && now >= next_interval_) {
    report_interval(now);
  }
  if (finished_) {
    return;
  }
  sweep_.expires_after(sweep_period_);
  sweep_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && !finished_) {
      sweep();
    }
  });
}

void Worker::report_interval(TimePoint now) {
  Tally merged;
  for (Worker* w : run_.workers) {
    merged.merge(w->take_interval());
  }
  merged.sent = merged.requests;  // the interval's rate counts completions
  Summary s = summarize(merged, to_seconds(now - run_.start), to_seconds(now - last_interval_));
  last_interval_ = now;
  next_interval_ = now + run_.options.interval;
  run_.hooks.on_interval(s);
}

Tally Worker::take_interval() {
  Tally fresh;
  std::lock_guard lock(interval_mutex_);
  std::swap(fresh, interval_);
  return fresh;
}

void Worker::end_sending(TimePoint now) {
  if (ended_) {
    return;
  }
  ended_ = true;
  stopped_sending_ = now;
  if (run_.options.rate > 0) {
    tally_.unsent += due_ - dispatched_;
  }
  pacer_.cancel();
  maybe_finish();
}

void Worker::maybe_finish() {
  if (!ended_ && active_ == 0 && dispatched_ >= limit_) {
    end_sending(std::chrono::steady_clock::now());  // --requests reached; ends via maybe_finish
    return;
  }
  if (!ended_ || active_ != 0 || finished_) {
    return;
  }
  finished_ = true;
  pacer_.cancel();
  sweep_.cancel();
  for (auto& c : connections_) {
    c->close();
  }
}

void Worker::on_finished(Connection& c, record::Outcome outcome, int status, TimePoint done) {
  --active_;
  bool failed = outcome != record::Outcome::ok;
  TimePoint intended_at = c.request().intended;
  nanoseconds latency = done - intended_at;
  nanoseconds service = done - c.sent().value_or(done);
  tally_.add(outcome, failed, c.responded(), latency, service);
  if (failed && !c.error().empty()) {
    tally_.note_error(outcome, c.error());
  }
  if (run_.hooks.on_interval) {
    std::lock_guard lock(interval_mutex_);
    interval_.add(outcome, failed, c.responded(), latency, service);
  }
  run_.disruption.add(intended_at - run_.start, failed);
  if (run_.hooks.on_record) {
    fill_record(c, outcome, status, done);
    run_.hooks.on_record(record_);
  }
}

void Worker::fill_record(const Connection& c, record::Outcome outcome, int status, TimePoint done) {
  TimePoint start = run_.start;
  record_.seq = c.request().seq;
  record_.intended = since(c.request().intended, start);
  record_.sent = c.sent() ? std::optional(since(*c.sent(), start)) : std::nullopt;
  record_.first_byte = c.first_byte() ? std::optional(since(*c.first_byte(), start)) : std::nullopt;
  record_.done = since(done, start);
  record_.outcome = outcome;
  record_.failed = outcome != record::Outcome::ok;
  record_.status = status;
  record_.connection = c.reused() ? record::Connection::reused : record::Connection::fresh;
  record_.target = c.request().target;
  record_.local_port = c.local_port();
  record_.backend.assign(c.backend());
  record_.router_error.assign(c.router_error());
  record_.error.assign(c.error());
}

void Worker::on_idle(Connection& c, TimePoint now) {
  if (!c.in_idle_list) {
    idle_[c.endpoint()].push_back(&c);
    c.in_idle_list = true;
  }
  dispatch(now);
  maybe_finish();
}

void Worker::on_closed(Connection& c, TimePoint now) {
  if (c.in_idle_list) {
    // The server closed an idle connection: forget it as idle (rare, so a linear search).
    auto& list = idle_[c.endpoint()];
    list.erase(std::find(list.begin(), list.end(), &c));
    c.in_idle_list = false;
  }
  if (!c.in_closed_list) {
    closed_.push_back(&c);
    c.in_closed_list = true;
  }
  dispatch(now);
  maybe_finish();
}

}  // namespace zerodrop::load
