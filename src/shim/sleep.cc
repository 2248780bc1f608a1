#include "shim/sleep.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <string>

namespace zerodrop::shim {

int sleep_for(std::chrono::nanoseconds duration) {
  // Block the stop signals and wait for them synchronously: no handler, no libc state.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigprocmask(SIG_BLOCK, &stop, nullptr);
  auto end = std::chrono::steady_clock::now() + duration;
  for (;;) {
    auto left = end - std::chrono::steady_clock::now();
    if (left <= std::chrono::nanoseconds::zero()) {
      return 0;
    }
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(left);
    timespec timeout{static_cast<time_t>(seconds.count()),
                     static_cast<long>((left - seconds).count())};
    int signal = sigtimedwait(&stop, nullptr, &timeout);
    if (signal > 0) {
      return 128 + signal;
    }
    if (errno != EAGAIN && errno != EINTR) {
      return 1;
    }
  }
}

std::optional<std::chrono::nanoseconds> parse_sleep_duration(std::string_view text) {
  std::string s(text);
  if (s.empty() || !(s[0] >= '0' && s[0] <= '9')) {
    return std::nullopt;
  }
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(s.c_str(), &end);
  std::string_view unit(end);
  double scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1;
  } else if (unit == "ms") {
    scale = 1e-3;
  } else if (unit == "m") {
    scale = 60;
  } else if (unit == "h") {
    scale = 3600;
  }
  double seconds = value * scale;
  if (errno != 0 || scale == 0 || !(seconds >= 0) || seconds > 1e9) {
    return std::nullopt;
  }
  return std::chrono::nanoseconds(static_cast<long long>(seconds * 1e9));
}

}  // namespace zerodrop::shim
