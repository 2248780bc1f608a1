#include "load/http1_session.h"

#include <algorithm>
#include <cstring>

#include <boost/asio/ssl/error.hpp>

#include "http/proxy_failure.h"
#include "load/plan.h"
#include "load/worker.h"

namespace zerodrop::load {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using record::Outcome;

// Twice the longest line the parser accepts: after a parse, at most one incomplete line stays.
constexpr size_t kBufferSize = 16 * 1024;
static_assert(kBufferSize > http::ParserLimits{}.max_line + 1);

}  // namespace

Http1Session::Http1Session(Worker& worker, const Plan& plan, asio::io_context& io)
    : worker_(worker),
      plan_(plan),
      transport_(worker, plan, io, *this),
      parser_({worker.options().backend_header, http::kRouterErrorHeader}),
      buffer_(new char[kBufferSize]),
      head_(new char[plan.max_head]) {
  stream_.error.reserve(64);
}

void Http1Session::start(const Request& request, TimePoint now) {
  stream_.begin(request);
  leftover_ = false;
  parser_.reset(plan_.targets[request.target].body);
  if (state_ == State::closed) {
    open(now);
    return;
  }
  reused_ = true;
  send(now);
}

void Http1Session::open(TimePoint now) {
  close_socket();
  state_ = State::connecting;
  reused_ = false;
  requests_ = 0;
  endpoint_ = plan_.targets[stream_.request.target].endpoint;
  stream_.deadline = now + worker_.options().connect_timeout;
  transport_.open(endpoint_);
}

void Http1Session::on_open(TimePoint now) {
  if (state_ == State::connecting) {
    send(now);
  }
}

void Http1Session::on_open_failed(Outcome outcome, std::string_view error, TimePoint now) {
  if (state_ != State::connecting) {
    return;
  }
  stream_.error = error;
  finish(outcome, 0, now, Reuse::no);
}

void Http1Session::send(TimePoint now) {
  state_ = State::busy;
  ++requests_;
  const PlanTarget& target = plan_.targets[stream_.request.target];
  uint64_t max = worker_.options().max_requests_per_connection;
  last_ = worker_.options().keepalive == Keepalive::off || (max != 0 && requests_ >= max)
          || closes_connection(worker_.options().fresh_share, stream_.request.seq);
  const http::RequestTemplate& head = last_ ? target.close : target.keep_alive;
  head.write(head_.get(), stream_.request.seq);
  head_size_ = head.size();
  stream_.sent = now;
  stream_.has_sent = true;
  stream_.deadline = now + worker_.options().timeout;
  transport_.send(unsent_buffers());
  if (!transport_.reading() && state_ == State::busy) {
    read();
  }
}

Transport::Buffers Http1Session::unsent_buffers() const {
  return {asio::const_buffer(head_.get(), head_size_),
          asio::const_buffer(plan_.body.data(), plan_.body.size())};
}

void Http1Session::on_written(const error_code& ec) {
  if (state_ != State::busy || !ec) {
    return;
  }
  fail_transport(ec, std::chrono::steady_clock::now());
}

void Http1Session::read() {
  transport_.read(asio::buffer(buffer_.get() + filled_, kBufferSize - filled_));
}

void Http1Session::on_read(const error_code& ec, size_t n) {
  if (state_ == State::idle) {
    // The server closed a kept-alive connection between requests (or sent bytes unasked): a
    // graceful server does this when it drains; it costs no request.
    close_socket();
    worker_.on_closed(*this, std::chrono::steady_clock::now());
    return;
  }
  TimePoint now = std::chrono::steady_clock::now();
  if (n > 0) {
    if (!stream_.has_first_byte) {
      stream_.first_byte = now;
      stream_.has_first_byte = true;
    }
    filled_ += n;
    consume();
    if (parser_.state() != http::ResponseParser::State::incomplete) {
      respond(now, Reuse::yes);
    } else {
      read();
    }
  } else if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
    // A TLS server that closes without close_notify ends a close-delimited body all the same.
    on_eof(now);
  } else if (ec) {
    fail_transport(ec, now);
  } else {
    read();
  }
}

void Http1Session::consume() {
  size_t used = parser_.feed(std::string_view(buffer_.get(), filled_));
  if (parser_.state() == http::ResponseParser::State::done) {
    leftover_ = used < filled_;
    filled_ = 0;
    return;
  }
  if (used > 0 && used < filled_) {
    std::memmove(buffer_.get(), buffer_.get() + used, filled_ - used);
  }
  filled_ -= used;
}

void Http1Session::respond(TimePoint now, Reuse reuse) {
  if (parser_.state() == http::ResponseParser::State::failed) {
    stream_.error = parser_.error();
    finish(Outcome::protocol_error, parser_.status(), now, Reuse::no);
    return;
  }
  int status = parser_.status();
  Outcome outcome = plan_.is_ok(status) ? Outcome::ok : record::outcome_of_status(status);
  bool keep = reuse == Reuse::yes && worker_.options().keepalive == Keepalive::on && !last_
              && parser_.keep_alive() && !leftover_;
  finish(outcome, status, now, keep ? Reuse::yes : Reuse::no);
}

void Http1Session::on_eof(TimePoint now) {
  if (parser_.finish() == http::ResponseParser::State::done) {
    respond(now, Reuse::no);  // a close-delimited body
    return;
  }
  stream_.error = "connection closed by the server";
  finish(parser_.started() ? Outcome::truncated_response : Outcome::closed_before_response,
         parser_.status(), now, Reuse::no);
}

void Http1Session::fail_transport(const error_code& ec, TimePoint now) {
  stream_.error = ec.message();
  finish(parser_.started() ? Outcome::reset_during_response : Outcome::reset_before_response,
         parser_.status(), now, Reuse::no);
}

void Http1Session::expire_if_due(TimePoint now) {
  if (now < stream_.deadline) {
    return;
  }
  if (state_ == State::connecting) {
    stream_.error = "connect timed out";
    finish(Outcome::connect_timeout, 0, now, Reuse::no);
  } else if (state_ == State::busy) {
    stream_.error = "no complete response within the timeout";
    finish(Outcome::timeout, parser_.status(), now, Reuse::no);
  }
}

// Records the outcome, then hands the connection back to the worker, which may reuse it at once;
// nothing here touches the connection after that.
void Http1Session::finish(Outcome outcome, int status, TimePoint now, Reuse reuse) {
  if (reuse == Reuse::no) {
    close_socket();
  } else {
    state_ = State::idle;
  }
  bool responded = parser_.state() == http::ResponseParser::State::done;
  worker_.on_finished(Finished{stream_, outcome, status, now, responded, reused_,
                               transport_.local_port(), parser_.captured(0), parser_.captured(1),
                               nullptr, parser_.error_body()});
  if (reuse == Reuse::yes) {
    if (!transport_.reading()) {
      read();  // a pending read notices when the server closes the idle connection
    }
    worker_.on_idle(*this, now);
  } else {
    worker_.on_closed(*this, now);
  }
}

void Http1Session::close() {
  close_socket();
}

void Http1Session::close_socket() {
  transport_.close();
  state_ = State::closed;
  filled_ = 0;
}

}  // namespace zerodrop::load
