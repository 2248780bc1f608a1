#include "base/timer.h"

#include <algorithm>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

namespace zerodrop {

namespace asio = boost::asio;

VirtualTime::VirtualTime(asio::io_context& io) : asio::execution_context::service(io), io_(io) {}

void VirtualTime::advance(Duration d) {
  Clock::time_point end = clock_.now() + d;
  run_ready();
  for (;;) {
    auto next = std::min_element(waits_.begin(), waits_.end(), [](const auto& a, const auto& b) {
      return a.second.at < b.second.at;  // min_element keeps the first of equals: arming order
    });
    if (next == waits_.end() || next->second.at > end) {
      break;
    }
    clock_.advance(std::max(Duration(0), next->second.at - clock_.now()));
    asio::post(io_, [handler = std::move(next->second.handler)] { handler({}); });
    waits_.erase(next);
    run_ready();
  }
  clock_.advance(std::max(Duration(0), end - clock_.now()));
  run_ready();
}

uint64_t VirtualTime::arm(Clock::time_point at, Handler handler) {
  uint64_t wait = next_id_++;
  waits_.emplace(wait, Wait{at, std::move(handler)});
  return wait;
}

void VirtualTime::cancel(uint64_t wait) {
  auto it = waits_.find(wait);
  if (it == waits_.end()) {
    return;
  }
  asio::post(
      io_, [handler = std::move(it->second.handler)] { handler(asio::error::operation_aborted); });
  waits_.erase(it);
}

// poll() returns at once on an io_context that ran out of work before: restart it first.
void VirtualTime::run_ready() {
  io_.restart();
  io_.poll();
}

Timer::Timer(asio::io_context& io) : steady_(io) {
  if (asio::has_service<VirtualTime>(io)) {
    virtual_ = &asio::use_service<VirtualTime>(io);
  }
}

Timer::~Timer() {
  cancel();
}

Clock::time_point Timer::now(asio::io_context& io) {
  if (asio::has_service<VirtualTime>(io)) {
    return asio::use_service<VirtualTime>(io).now();
  }
  return std::chrono::steady_clock::now();
}

void Timer::expires_after(Duration d) {
  if (virtual_ == nullptr) {
    steady_.expires_after(d);
    return;
  }
  cancel();
  expiry_ = virtual_->now() + d;
}

void Timer::cancel() {
  if (virtual_ == nullptr) {
    steady_.cancel();
    return;
  }
  if (wait_ != 0) {
    virtual_->cancel(wait_);
    wait_ = 0;
  }
}

}  // namespace zerodrop
