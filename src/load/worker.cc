#include "load/worker.h"

#include <algorithm>

#include <boost/asio/post.hpp>

#include "load/http1_session.h"
#include "load/http2_session.h"

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

// Open loop: requests intended within this of each other go out at one timer wake (Schedule).
// At most this much of delay for the first of them; nothing at rates up to 1,000 a second.
constexpr nanoseconds kSendWindow = std::chrono::milliseconds(1);

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
    if (run.plan.protocol == Protocol::http1) {
      sessions_.push_back(std::make_unique<Http1Session>(*this, run.plan, io_));
    } else {
      sessions_.push_back(std::make_unique<Http2Session>(*this, run.plan, io_));
    }
  }
  for (auto it = sessions_.rbegin(); it != sessions_.rend(); ++it) {
    closed_.push_back(it->get());
    (*it)->in_closed_list = true;
  }
  schedule_.rate = run.options.rate;
  schedule_.index = index;
  schedule_.count = count;
  schedule_.window = kSendWindow;
  if (run.options.max_requests != 0) {
    uint64_t n = run.options.max_requests;
    schedule_.limit = n / count + (index < n % count ? 1 : 0);
  }
}

Worker::~Worker() = default;

void Worker::run() {
  asio::post(io_, [this] {
    TimePoint now = std::chrono::steady_clock::now();
    schedule_.start = run_.start;
    schedule_.end = run_.end;
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

bool Worker::next_request(TimePoint now, Request& out) const {
  if (!resend_.empty()) {
    out = resend_.front();
    return true;
  }
  if (ended_ || dispatched_ >= schedule_.limit || (run_.options.rate > 0 && dispatched_ >= due_)) {
    return false;
  }
  uint64_t k = schedule_.global_index(dispatched_);
  out = Request{};  // a first attempt: nothing of a resend dispatched before it
  out.seq = k;
  out.target = static_cast<uint32_t>(k % run_.plan.targets.size());
  out.intended = run_.options.rate > 0 ? schedule_.intended(dispatched_) : now;
  return true;
}

// A kept-alive connection to the endpoint, else a closed slot, else an idle connection to another
// endpoint with nothing in flight, closed to free its slot. An HTTP/2 session that can take more
// streams stays in its idle list.
Session* Worker::pick(uint32_t endpoint) {
  std::vector<Session*>& list = idle_[endpoint];
  while (!list.empty()) {
    Session* c = list.back();
    if (c->state() == Session::State::idle) {
      return c;
    }
    list.pop_back();
    c->in_idle_list = false;
  }
  return pick_new();
}

// A slot for a new connection: a closed one, else an idle one with nothing in flight, closed.
Session* Worker::pick_new() {
  if (Session* c = take_closed()) {
    return c;
  }
  return close_unused_idle();
}

Session* Worker::take_closed() {
  while (!closed_.empty()) {
    Session* c = closed_.back();
    closed_.pop_back();
    c->in_closed_list = false;
    if (c->state() == Session::State::closed) {
      return c;
    }
  }
  return nullptr;
}

Session* Worker::close_unused_idle() {
  for (auto& list : idle_) {
    while (!list.empty()) {
      Session* c = list.back();
      if (c->state() == Session::State::idle && c->active() != 0) {
        break;  // in use: keep it listed
      }
      list.pop_back();
      c->in_idle_list = false;
      if (c->state() == Session::State::idle) {
        c->close();
        return c;
      }
    }
  }
  return nullptr;
}

void Worker::dispatch(TimePoint now) {
  Request request;
  while (next_request(now, request)) {
    Session* c =
        request.client_resend ? pick_new() : pick(run_.plan.targets[request.target].endpoint);
    if (c == nullptr) {
      return;
    }
    if (request.attempt > 1) {
      resend_.pop_front();  // already counted sent and active
    } else {
      ++dispatched_;
      ++tally_.sent;
      ++active_;
    }
    c->start(request, now);
    if (c->state() != Session::State::idle && c->in_idle_list) {
      idle_[c->endpoint()].pop_back();  // it was the list's last: pick() takes from the back
      c->in_idle_list = false;
    }
  }
}

// Open loop: marks the requests whose intended time has come as due, sends what the connections
// allow, counts the rest late (they go out as soon as a connection frees up), and sleeps until
// the next wake (which sends the requests of one send window together).
void Worker::pace() {
  TimePoint now = std::chrono::steady_clock::now();
  // Before the end check: a pacer that wakes late, past the end, still owes the requests whose
  // intended time came before the end (they count as unsent, not as never planned).
  while (due_ < schedule_.limit && schedule_.intended(due_) <= now
         && schedule_.intended(due_) < run_.end) {
    ++due_;
  }
  if (now >= run_.end) {
    end_sending(now);
    return;
  }
  dispatch(now);
  if (dispatched_ < due_) {
    tally_.late += due_ - std::max(dispatched_, late_mark_);
    late_mark_ = due_;
  }
  arm_pacer(schedule_.wake_for(due_));
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
  for (auto& c : sessions_) {
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
  if (!ended_ && active_ == 0 && dispatched_ >= schedule_.limit) {
    end_sending(std::chrono::steady_clock::now());  // --requests reached; ends via maybe_finish
    return;
  }
  if (!ended_ || active_ != 0 || finished_) {
    return;
  }
  finished_ = true;
  pacer_.cancel();
  sweep_.cancel();
  for (auto& c : sessions_) {
    c->close();
  }
}

void Worker::on_finished(const Finished& f) {
  --active_;
  bool failed = f.outcome != record::Outcome::ok;
  TimePoint intended_at = f.stream.request.intended;
  nanoseconds latency = f.done - intended_at;
  nanoseconds service = f.done - f.stream.sent_at().value_or(f.done);
  tally_.add(f.outcome, failed, f.responded, latency, service);
  if (failed && !f.stream.error.empty()) {
    tally_.note_error(f.outcome, f.stream.error);
  }
  count_retry(f, failed);
  if (run_.hooks.on_interval) {
    std::lock_guard lock(interval_mutex_);
    interval_.add(f.outcome, failed, f.responded, latency, service);
  }
  run_.disruption.add(intended_at - run_.start, failed);
  if (run_.hooks.on_record) {
    fill_record(f);
    run_.hooks.on_record(record_);
  }
}

// Counts the resends and the failures a client may resend, and with --client-retry queues the
// resend of a retry-safe first attempt on a new connection (it stays active until resent).
void Worker::count_retry(const Finished& f, bool failed) {
  const Request& request = f.stream.request;
  if (request.attempt > 1 && !request.client_resend) {
    ++(failed ? tally_.h2.resend_failed : tally_.h2.resent_ok);
  }
  tally_.resent_ok += request.client_resend && !failed ? 1 : 0;
  auto bytes = f.stream.has_first_byte ? record::ResponseBytes::some : record::ResponseBytes::none;
  auto connection = f.reused ? record::Connection::reused : record::Connection::fresh;
  retry_safe_ = failed
                && record::retry_safe(f.outcome, connection, bytes,
                                      run_.plan.targets[request.target].idempotent);
  resent_ = retry_safe_ && request.attempt == 1 && run_.options.client_retry == ClientRetry::once;
  tally_.retry_safe += retry_safe_ ? 1 : 0;
  if (resent_) {
    ++tally_.resent;
    ++tally_.sent;
    ++active_;
    Request again = request;
    again.attempt = 2;
    again.client_resend = true;
    resend_.push_back(again);
  }
}

void Worker::on_unprocessed(const Request& request) {
  resend_.push_back(request);
}

namespace {

// Keeps `bytes` as printable ASCII (a line break as a space, anything else as '?'): a body is
// the server's, and the record's JSON must stay valid UTF-8 whatever it sent.
void assign_printable(std::string& out, std::string_view bytes) {
  out.assign(bytes);
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') {
      c = ' ';
    } else if (c < 0x20 || c > 0x7e) {
      c = '?';
    }
  }
  while (!out.empty() && out.back() == ' ') {
    out.pop_back();  // the line break that ended it
  }
}

}  // namespace

void Worker::fill_record(const Finished& f) {
  TimePoint start = run_.start;
  const Request& request = f.stream.request;
  record_.seq = request.seq;
  record_.intended = since(request.intended, start);
  record_.sent = f.stream.has_sent ? std::optional(since(f.stream.sent, start)) : std::nullopt;
  record_.first_byte =
      f.stream.has_first_byte ? std::optional(since(f.stream.first_byte, start)) : std::nullopt;
  record_.done = since(f.done, start);
  record_.outcome = f.outcome;
  record_.failed = f.outcome != record::Outcome::ok;
  record_.status = f.status;
  record_.connection = f.reused ? record::Connection::reused : record::Connection::fresh;
  record_.target = request.target;
  record_.local_port = f.local_port;
  record_.backend.assign(f.backend);
  record_.router_error.assign(f.router_error);
  record_.error.assign(f.stream.error);
  record_.retry_safe = retry_safe_;
  record_.attempt = request.client_resend ? 2 : 1;
  record_.resent = resent_;
  assign_printable(record_.body, f.error_body);
  if (f.h2 == nullptr) {
    record_.h2.reset();
    return;
  }
  record_.h2 = *f.h2;
  if (request.first_attempt) {
    const FirstAttempt& first = *request.first_attempt;
    record_.h2->first_attempt = record::FirstAttemptRecord{first.outcome, first.conn, first.stream,
                                                           since(first.done, start)};
  }
}

void Worker::on_idle(Session& c, TimePoint now) {
  if (!c.in_idle_list) {
    idle_[c.endpoint()].push_back(&c);
    c.in_idle_list = true;
  }
  dispatch(now);
  maybe_finish();
}

void Worker::on_closed(Session& c, TimePoint now) {
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
